// `telemetry --out DIR` and `hipipe --study ... --out DIR` write only into a new or empty folder or
// one the same command wrote (study/run_folder.hpp): a study's report, or a file of the user's
// under one of their names, is not replaced unless --replace says so; and `run` does not take over
// their folders either.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

// A decision log of 12 calls that telemetry reads.
std::string owner_test_log(const std::string& dir) {
  std::string bytes = decision_log_header("policy=random\nseed=7\n") + decision_log_context();
  for (int i = 0; i < 12; ++i) bytes += decision_log_call(uint64_t(i), i % 6, 1.0 / 6, 10.0 + i);
  write_file(dir + "/d.log", bytes);
  return dir + "/d.log";
}

// A two-case HiPIPE study.
std::string owner_test_hipipe_study(const std::string& dir) {
  write_file(dir + "/hipipe.toml",
             "sizes = [\"1M\"]\n[[topology]]\nfabric = \"h100-ib-a\"\nnodes = [1, 16]\n");
  return dir + "/hipipe.toml";
}

TEST(OutputFolderOwner, TelemetryKeepsAStudysReportUnlessReplacing) {
  const std::string dir = temp_dir(), log = owner_test_log(dir), study = dir + "/s.toml", out = dir + "/run";
  write_file(study, small_study_text("s", "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n"));
  ASSERT_EQ(run_cli("run '" + study + "' --out '" + out + "' --no-figures").exit_code, 0);
  const std::string report = read_all(out + "/report.md");
  const std::string telemetry = "telemetry '" + log + "' --out '" + out + "' --no-figures";
  const CliResult r = run_cli(telemetry);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the study 's'"), std::string::npos) << r.err;
  EXPECT_EQ(read_all(out + "/report.md"), report);
  EXPECT_EQ(run_cli(telemetry + " --replace").exit_code, 0);
  EXPECT_NE(read_all(out + "/report.md"), report);
  // The folder is telemetry's now: a rerun is fine, and the study's run is refused there.
  EXPECT_EQ(run_cli(telemetry).exit_code, 0);
  const CliResult again = run_cli("run '" + study + "' --out '" + out + "' --no-figures");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("ncclbot telemetry"), std::string::npos) << again.err;
}

TEST(OutputFolderOwner, TelemetryAndHipipeKeepTheUsersFiles) {
  const std::string dir = temp_dir(), log = owner_test_log(dir), hipipe = owner_test_hipipe_study(dir);
  std::filesystem::create_directories(dir + "/mine");
  write_file(dir + "/mine/report.md", "my notes");
  write_file(dir + "/mine/hipipe_summary.md", "my summary");
  const CliResult t = run_cli("telemetry '" + log + "' --out '" + dir + "/mine' --no-figures");
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("--replace"), std::string::npos) << t.err;
  const CliResult h = run_cli("hipipe --study '" + hipipe + "' --out '" + dir + "/mine' --no-figure");
  EXPECT_EQ(h.exit_code, 2);
  EXPECT_NE(h.err.find(dir + "/mine"), std::string::npos) << h.err;
  EXPECT_EQ(read_all(dir + "/mine/report.md"), "my notes");
  EXPECT_EQ(read_all(dir + "/mine/hipipe_summary.md"), "my summary");
  // Each may rerun into its own folder.
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(run_cli("hipipe --study '" + hipipe + "' --out '" + dir + "/h' --no-figure").exit_code, 0);
    EXPECT_EQ(run_cli("telemetry '" + log + "' --out '" + dir + "/t' --no-figures").exit_code, 0);
  }
  EXPECT_EQ(run_cli("hipipe --study '" + hipipe + "' --out '" + dir + "/t' --no-figure").exit_code, 2);
}

}  // namespace
}  // namespace ncclbot::test
