// The online state file through the plugin: saved atomically at finalize, restored at the next
// init (a new job continues where the last one stopped), a corrupt, truncated or foreign file is
// ignored with a warning, and a file ncclbot did not write is never replaced. Format and safety
// details: tests/plugin/unit/state_file_unit.cpp.
#include <gtest/gtest.h>

#include <dirent.h>

#include <chrono>
#include <fstream>

#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

int decide(void* tuner) {
  CostTable7x3 t = two_arms();
  plugin().v5->getCollInfo(tuner, 4, 4096, 1, t.ptr(), 7, 3, 0, nullptr);
  return t.pick();
}

// A job: greedy n0=0 plays slot 0, then slot 5, then the smaller mean. Slot 5 is made faster.
void first_job(const std::string& state) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0"), st("NCCLBOT_STATE", state);
  void* tuner = nullptr;
  plugin().v5->init(&tuner, 7, 1, 1, recording_logger, nullptr, nullptr);
  EXPECT_EQ(decide(tuner), 0);
  plugin().report(7, 1, 1, 4, 4096, 0, 0, 50.0);
  EXPECT_EQ(decide(tuner), 5);
  plugin().report(7, 1, 1, 4, 4096, 1, 2, 5.0);
  plugin().v5->finalize(tuner);
}

int first_decision_of_second_job(const std::string& state, const std::string& spec = "greedy:n0=0") {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", spec), st("NCCLBOT_STATE", state);
  void* tuner = nullptr;
  plugin().v5->init(&tuner, 8, 1, 1, recording_logger, nullptr, nullptr);
  const int d = decide(tuner);
  plugin().v5->finalize(tuner);
  return d;
}

std::string read_bytes(const std::string& p) {
  return read_all(p);
}

}  // namespace

TEST(StateFile, SecondJobContinuesFromTheFirst) {
  const std::string dir = temp_dir();
  const std::string state = dir + "/ncclbot.state";
  first_job(state);
  ASSERT_FALSE(read_bytes(state).empty());
  // No temporary file is left beside the state.
  int entries = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++entries;
    closedir(d);
  }
  EXPECT_EQ(entries, 1);
  // Restored: both arms tried, slot 5 has the smaller mean. A fresh start would play slot 0.
  clear_log();
  EXPECT_EQ(first_decision_of_second_job(state), 5);
  EXPECT_TRUE(logged(kNcclLogInfo, "restored 1 contexts from " + state));
  // A communicator of another shape (a split of the job's, 2 ranks) finds nothing of its own: it
  // says so and starts from NCCL's prior (greedy n0 = 0: the first untried arm, slot 0).
  clear_log();
  {
    EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0"),
        st("NCCLBOT_STATE", state), agree("NCCLBOT_AGREEMENT", "local");
    void* split = nullptr;
    plugin().v5->init(&split, 9, 2, 1, recording_logger, nullptr, nullptr);
    EXPECT_EQ(decide(split), 0);
    plugin().v5->finalize(split);
  }
  EXPECT_TRUE(logged(kNcclLogInfo, state + " holds no context of 2 ranks on 1 nodes: starts clean"));
  EXPECT_FALSE(logged(kNcclLogInfo, "restored"));
}

TEST(StateFile, CorruptTruncatedAndForeignFilesAreIgnoredWithAWarning) {
  const std::string dir = temp_dir();
  const std::string state = dir + "/ncclbot.state";
  first_job(state);
  const std::string good = read_bytes(state);

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x5a;
  write_file(state, flipped);
  clear_log();
  EXPECT_EQ(first_decision_of_second_job(state), 0);  // fresh start
  EXPECT_TRUE(logged(kNcclLogWarn, "checksum mismatch"));

  write_file(state, good.substr(0, good.size() - 20));
  clear_log();
  EXPECT_EQ(first_decision_of_second_job(state), 0);
  EXPECT_TRUE(logged(kNcclLogWarn, "ignoring it"));

  write_file(state, "not a state file at all\n");
  clear_log();
  EXPECT_EQ(first_decision_of_second_job(state), 0);
  EXPECT_TRUE(logged(kNcclLogWarn, "not an ncclbot state file"));
  // A user's file at that path is left alone at finalize, with a warning.
  EXPECT_TRUE(logged(kNcclLogWarn, "not written by ncclbot; left alone"));
  EXPECT_EQ(read_bytes(state), "not a state file at all\n");

  // Written for another policy configuration: foreign.
  write_file(state, good);
  clear_log();
  EXPECT_EQ(first_decision_of_second_job(state, "greedy:n0=2"), 0);
  EXPECT_TRUE(logged(kNcclLogWarn, "another policy"));

  // Another format version (byte 8 is the low byte of the version field).
  std::string other_version = good;
  other_version[8] = 9;
  write_file(state, other_version);
  clear_log();
  EXPECT_EQ(first_decision_of_second_job(state), 0);
  EXPECT_TRUE(logged(kNcclLogWarn, "state file version 9 is not 3 or 2"));
}

TEST(StateFile, DevZeroFailsFastWithAWarning) {
  clear_log();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(first_decision_of_second_job("/dev/zero"), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_TRUE(logged(kNcclLogWarn, "/dev/zero: not a regular file"));
}
