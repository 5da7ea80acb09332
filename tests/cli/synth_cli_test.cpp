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
  EXPECT_EQ(
      read_all(a).rfind("fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us", 0),
      0u);
  const CliResult r = run_cli("inspect '" + a + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["contexts"], 2 * 2 * 7);  // 2 collectives x 2 node counts x 1 KiB..64 KiB
  EXPECT_EQ(j["samples"], 2);
  EXPECT_TRUE(j.contains("auto"));
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
}

}  // namespace
}  // namespace ncclbot::test
