// `ncclbot synth` as a user runs it: writes a sweep with a prior that `inspect` reads, deterministic
// in the seed, exit code 2 on bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

TEST(SynthCli, WritesASweepInspectReads) {
  const std::string dir = temp_dir();
  const std::string a = dir + "/a.csv", b = dir + "/b.csv", c = dir + "/c.csv";
  const std::string opts =
      " --nodes 2,4 --collectives allreduce,allgather --samples 2 --min-bytes 1024 --max-bytes 65536";
  ASSERT_EQ(run_cli("synth --fabric h100-roce --seed 4 --out '" + a + "'" + opts).exit_code, 0);
  ASSERT_EQ(run_cli("synth --fabric h100-roce --seed 4 --out '" + b + "'" + opts).exit_code, 0);
  ASSERT_EQ(run_cli("synth --fabric h100-roce --seed 5 --out '" + c + "'" + opts).exit_code, 0);
  EXPECT_EQ(read_all(a), read_all(b));
  EXPECT_NE(read_all(a), read_all(c));
  // The observation model's call dynamics come first, then the header.
  // A plain CSV, header first; the observation model's call dynamics are in the side file beside it.
  EXPECT_EQ(read_all(a).rfind(
                "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n", 0),
            0u);
  EXPECT_NE(read_all(dir + "/a.sweep.toml")
                .find("[dynamics]\njob_warmup = 0.2\njob_warmup_calls = 5\narm_warmup = 0.2\n"),
            std::string::npos);
  EXPECT_EQ(read_all(dir + "/a.sweep.toml"), read_all(dir + "/b.sweep.toml"));
  const CliResult r = run_cli("inspect '" + a + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["contexts"], 2 * 2 * 7);  // 2 collectives x 2 node counts x 1 KiB..64 KiB
  EXPECT_EQ(j["samples"], 2);
  EXPECT_TRUE(j.contains("auto"));

  // --observation off: the [noise]-only sweep, with no dynamics line; the knobs change the samples.
  const std::string off = dir + "/off.csv", loud = dir + "/loud.csv", still = dir + "/still.csv";
  ASSERT_EQ(
      run_cli("synth --fabric h100-roce --seed 4 --observation off --out '" + off + "'" + opts).exit_code, 0);
  EXPECT_EQ(read_all(off).rfind("fabric,collective,", 0), 0u);
  ASSERT_EQ(
      run_cli("synth --fabric h100-roce --seed 4 --noise-scale 2 --out '" + loud + "'" + opts).exit_code, 0);
  EXPECT_NE(read_all(loud), read_all(a));
  ASSERT_EQ(run_cli("synth --fabric h100-roce --seed 4 --drift off --first-use off --warmup off --out '" +
                    still + "'" + opts)
                .exit_code,
            0);
  // Nothing left of the dynamics: no dynamics line at all.
  EXPECT_EQ(read_all(still).rfind("fabric,collective,", 0), 0u);
}

TEST(SynthCli, BadInputExitsTwo) {
  const std::string out = temp_dir() + "/x.csv";
  CliResult r = run_cli("synth --fabric nope --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown fabric"), std::string::npos);
  r = run_cli("synth --fabric gb200-mnnvl --nodes 20 --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("NVLink domains"), std::string::npos) << r.err;
  r = run_cli("synth --fabric h100-ib-a --nodes 4,x --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli("synth --fabric h100-ib-a --samples 0 --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli("synth --fabric h100-ib-a --observation maybe --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--observation must be on or off"), std::string::npos) << r.err;
  r = run_cli("synth --fabric h100-ib-a --noise-scale -1 --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace ncclbot::test
