// A run folder holding something other than a regular file where ncclbot writes one (a FIFO, a
// folder) is refused at once with exit 2, never waited on, and an input of the study that lives in
// the folder under a name the run manages (one it writes or one an earlier run listed) is refused
// with the study file's line instead of being deleted.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "ncclbot/core/error.hpp"
#include "study/run_folder.hpp"
#include "support/ncclbot_binary.hpp"
#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;

const study::FolderOwner kSpecialOwner{"run", "t"};

// `ncclbot ARGS` with a time limit, so a command that waits on a FIFO fails the test (exit 124)
// instead of hanging it.
CliResult run_limited(const std::string& args) {
  return run_cli_with("timeout", "20 '" + ncclbot_binary() + "' " + args);
}

TEST(RunFolderSpecialFiles, AFifoOrAFolderWhereAFileGoesIsNotListed) {
  const std::string dir = temp_dir() + "/run";
  const study::RunFolder f = study::RunFolder::claim(dir, "--out", kSpecialOwner, false);
  ASSERT_EQ(::mkfifo((dir + "/report.md").c_str(), 0644), 0);
  fs::create_directories(dir + "/results.json");
  for (const char* name : {"report.md", "results.json"}) {
    try {
      f.record({name});
      FAIL() << name << " was listed";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(dir + "/" + name), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(f.listed().empty());
}

// A finished run of the tiny study in a new folder.
std::string finished_tiny_run() {
  const std::string out = temp_dir() + "/out";
  const CliResult r = run_cli("run '" + kTinyStudy + "' --out '" + out + "' --no-figures");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

TEST(RunFolderSpecialFiles, RerunIntoAFolderWithFifosExitsTwoAtOnce) {
  const std::string out = finished_tiny_run();
  std::string unit;
  for (const auto& e : fs::directory_iterator(out + "/units")) unit = "units/" + e.path().filename().string();
  for (const std::string& name : {std::string("report.md"), std::string("results.json"),
                                  std::string(".ncclbot-run"), std::string("sweeps/sim.csv"), unit}) {
    const std::string path = out + "/" + name, keep = read_all(path);
    fs::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
    const CliResult r = run_limited("run '" + kTinyStudy + "' --out '" + out + "' --no-figures");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << name << ": " << r.err;
    fs::remove(path);
    write_file(path, keep);
  }
}

TEST(RunFolderSpecialFiles, HipipeStudyRefusesAFifoMarker) {
  const std::string base = temp_dir();
  fs::create_directories(base + "/h");
  ASSERT_EQ(::mkfifo((base + "/h/.ncclbot-run").c_str(), 0644), 0);
  write_file(base + "/h.toml", "sizes = [\"1M\"]\n[[topology]]\nfabric = \"h100-ib-a\"\nnodes = [2]\n");
  const CliResult h = run_limited("hipipe --study '" + base + "/h.toml' --no-figure --out '" + base + "/h'");
  EXPECT_EQ(h.exit_code, 2) << h.err;
  EXPECT_NE(h.err.find("not a regular file"), std::string::npos) << h.err;
}

TEST(RunFolderSpecialFiles, AnInputUnderAListedNameIsRefusedNotDeleted) {
  const std::string base = temp_dir(), out = base + "/out";
  write_file(base + "/s1.toml", small_study_text("t", "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n"));
  ASSERT_EQ(run_cli("run '" + base + "/s1.toml' --out '" + out + "' --no-figures").exit_code, 0);
  const std::string sweep = read_all(out + "/sweeps/x.csv");
  ASSERT_FALSE(sweep.empty());
  // The same study, its sweep now read from the file the first run wrote, under another name: the
  // old name is listed and no longer planned, so the run would delete its own input.
  write_file(base + "/s2.toml",
             "[study]\nname = \"t\"\nseeds = 1\nhorizon = 20\nbackend = \"cpu\"\n"             // lines 1-5
             "bootstrap_resamples = 100\npermutation_resamples = 100\nloss_vs_horizon = []\n"  // 6-8
             "[[sweep]]\nname = \"y\"\nfile = \"out/sweeps/x.csv\"\n"  // [[sweep]] on line 9
             "[[scenario]]\nname = \"s\"\ntune = { sweep = \"y\" }\nscore = { sweep = \"y\" }\n"
             "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n");
  const CliResult r = run_cli("run '" + base + "/s2.toml' --out '" + out + "' --no-figures");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(base + "/s2.toml:9: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sweeps/x.csv"), std::string::npos) << r.err;
  EXPECT_TRUE(read_all(out + "/sweeps/x.csv") == sweep) << "the sweep the study reads was changed";
}

}  // namespace
}  // namespace ncclbot::test
