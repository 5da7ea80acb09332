// `ncclbot run-units --shard I/N` then `ncclbot run`: the study's report is byte-identical to one
// uninterrupted `ncclbot run`, because the shards write the same unit checkpoints `run` would.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"
#include "support/study_files.hpp"

using namespace ncclbot::test;

namespace {
}

TEST(RunUnitsCli, ShardsThenRunGiveTheSingleRunReport) {
  const std::string dir = temp_dir();
  const CliResult whole =
      run_cli("run '" + kTinyStudy + "' --out '" + dir + "/one' --no-figures --threads 1 --json");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  for (int i = 0; i < 3; ++i) {
    const CliResult s = run_cli("run-units '" + kTinyStudy + "' --out '" + dir +
                                "/many' --threads 1 --json --shard " + std::to_string(i) + "/3");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_EQ(nlohmann::json::parse(s.out)["shard"]["index"], i);
  }
  const CliResult merged =
      run_cli("run '" + kTinyStudy + "' --out '" + dir + "/many' --no-figures --threads 1 --json");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const auto m = nlohmann::json::parse(merged.out);
  EXPECT_EQ(m["units_reused"], m["units"]);  // the shards covered every unit
  EXPECT_EQ(read_all(dir + "/many/results.json"), read_all(dir + "/one/results.json"));
  EXPECT_EQ(read_all(dir + "/many/report.md"), read_all(dir + "/one/report.md"));
  // A rerun of a shard finds its units complete.
  const CliResult again =
      run_cli("run-units '" + kTinyStudy + "' --out '" + dir + "/many' --threads 1 --json --shard 1/3");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["computed"], 0);
}

TEST(RunUnitsCli, NeedsAShardOutsideMpi) {
  const std::string dir = temp_dir();
  EXPECT_EQ(run_cli("run-units '" + kTinyStudy + "' --out '" + dir + "/x'").exit_code, 2);
  EXPECT_EQ(run_cli("run-units '" + kTinyStudy + "' --out '" + dir + "/x' --shard 2/2").exit_code, 2);
}
