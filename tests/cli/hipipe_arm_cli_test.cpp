// The simulated HiPIPE arm end to end through the CLI: a study on a sweep with the arm runs; AUTO's
// decisions export (NCCL's arms only) while a policy that chose HiPIPE is refused; plugin-check
// skips the contexts holding the arm (NCCL's table cannot express it) and still reports EQUAL on
// the others; replay output does not depend on the thread count.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

const char* kHipipeArmStudy = R"([study]
name = "hipipe-tiny"
seed = 3
seeds = 2
horizon = 60
curve_horizons = [20]
bootstrap_resamples = 200
permutation_resamples = 999
backend = "cpu"

[[sweep]]
name = "sim"
preset = "gb200-ib"
seed = 5
nodes = [2, 4]
collectives = ["allreduce"]
samples = 2
hipipe = true

[[scenario]]
name = "ar"
tune = { sweep = "sim", nodes = [2] }
score = { sweep = "sim", nodes = [4] }

[[policy]]
name = "AUTO"
spec = "auto"

[[policy]]
name = "oracle"
spec = "oracle"

[[hypothesis]]
a = "oracle"
b = "AUTO"
metrics = ["mean"]
)";

}  // namespace

TEST(HiPipeArmCli, StudyExportsAutoAndRefusesAPolicyThatChoseHiPipe) {
  const std::string dir = temp_dir() + "/hipipe_study";
  write_file(dir + ".toml", kHipipeArmStudy);
  const CliResult run = run_cli("run '" + dir + ".toml' --out '" + dir + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto results = nlohmann::json::parse(read_all(dir + "/results.json"));
  EXPECT_EQ(results["sweeps"][0]["source"]["hipipe"], true);
  int oracle_hipipe = 0, auto_hipipe = 0;
  for (const auto& s : results["scores"])
    for (const auto& d : s["decisions"])
      (s["policy"] == "oracle" ? oracle_hipipe : auto_hipipe) += d == "HiPIPE/Simple";
  EXPECT_GT(oracle_hipipe, 0);  // gb200-ib at 4 trays: HiPIPE wins at large sizes (docs/hipipe.md)
  EXPECT_EQ(auto_hipipe, 0);

  // scripts/hipipe_arm_summary.py reads the finished study: the oracle finds HiPIPE wherever it is
  // best (its final arm is the best arm), AUTO never (NCCL cannot run it).
  const std::string summary = dir + "/summary.txt";
  ASSERT_EQ(std::system(("python3 '" + std::string(NCCLBOT_SOURCE_DIR) + "/scripts/hipipe_arm_summary.py' '" +
                         dir + "' > '" + summary + "' 2>&1")
                            .c_str()),
            0)
      << read_all(summary);
  const std::string text = read_all(summary);
  EXPECT_NE(text.find("pooled: "), std::string::npos) << text;
  EXPECT_NE(text.find("oracle         final arm HiPIPE where best"), std::string::npos) << text;
  EXPECT_NE(text.find("(100.0%), false picks   0"), std::string::npos) << text;
  EXPECT_NE(text.find("AUTO           final arm HiPIPE where best   0 (0.0%)"), std::string::npos) << text;

  const CliResult a =
      run_cli("export-table --study '" + dir + "' --policy AUTO --out '" + dir + "/auto.csv'");
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(read_all(dir + "/auto.csv").find("HiPIPE"), std::string::npos);
  const CliResult o = run_cli("export-table --study '" + dir + "' --policy oracle --out '" + dir + "/o.csv'");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("chose the simulated HiPIPE arm"), std::string::npos) << o.err;
}

TEST(HiPipeArmCli, PluginCheckSkipsHiPipeContextsAndStaysEqual) {
  const std::string csv = temp_dir() + "/hipipe_check.csv";
  const CliResult s = run_cli(
      "synth --fabric h100-ib-a --seed 1 --nodes 2 --collectives allreduce,allgather "
      "--min-bytes 1048576 --max-bytes 4194304 --samples 3 --hipipe --out '" +
      csv + "'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const CliResult r = run_cli("plugin-check --plugin '" + plugin_path() + "' --sweep '" + csv +
                              "' --policy 'ucb1:c=0.5,n0=8' --seed 5 --horizon 50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["skipped"], 3);   // the three all-reduce sizes hold HiPIPE
  EXPECT_EQ(j["contexts"], 3);  // the all-gathers are checked
  EXPECT_EQ(j["equal"], true);
  EXPECT_NE(r.err.find("simulated HiPIPE arm"), std::string::npos) << r.err;
}

TEST(HiPipeArmCli, ReplayIsTheSameOnOneAndTwoThreads) {
  const std::string csv = temp_dir() + "/hipipe_replay.csv";
  ASSERT_EQ(
      run_cli("synth --fabric gb200-ib --seed 2 --nodes 2,4 --collectives allreduce --min-bytes 8388608 "
              "--max-bytes 67108864 --samples 3 --hipipe --out '" +
              csv + "'")
          .exit_code,
      0);
  const std::string base =
      "replay --sweep '" + csv + "' --policy 'ucb1:c=0.05,n0=1' --seeds 3 --horizon 80 --json";
  const CliResult one = run_cli(base + " --threads 1"), two = run_cli(base + " --threads 2");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
}
