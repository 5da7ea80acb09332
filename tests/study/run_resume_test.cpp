// `ncclbot run` is resumable: killed with SIGKILL at random points (during synthesis, between and
// inside units, while writing the report), rerunning the same command must finish the study and
// leave every output byte-identical to an uninterrupted run (which used another thread count).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;

// Every regular file under `dir` (relative path -> bytes), temporaries included: a leftover
// "*.tmp.*" would be a difference too.

pid_t start_run(const std::string& out, const char* threads = "2") {
  const pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execl(NCCLBOT_BINARY, NCCLBOT_BINARY, "run", kTinyStudy.c_str(), "--out", out.c_str(), "--no-figures",
          "--threads", threads, static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Runs to completion; returns the exit code.
int run_to_end(const std::string& out, const char* threads = "2") {
  int status = 0;
  waitpid(start_run(out, threads), &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RunResume, KilledAtRandomPointsThenResumedIsByteIdentical) {
  const std::string base = temp_dir();
  const std::string reference = base + "/reference";
  const auto t0 = std::chrono::steady_clock::now();
  // The reference runs on one thread, the interrupted runs on two: the outputs must not depend on it.
  ASSERT_EQ(run_to_end(reference, "1"), 0);
  const double full_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto expected = snapshot(reference);
  ASSERT_TRUE(expected.count("results.json"));
  ASSERT_TRUE(expected.count("report.md"));

  const unsigned seed = unsigned(std::random_device{}());
  std::mt19937 rng(seed);
  SCOPED_TRACE("random seed " + std::to_string(seed) + ", uninterrupted run " + std::to_string(full_ms) +
               " ms");
  for (int trial = 0; trial < 2; ++trial) {
    const std::string out = base + "/killed" + std::to_string(trial);
    // Several kills in a row on the same folder, each at a random moment of the remaining work.
    int kills = 0;
    for (int k = 0; k < 4; ++k) {
      const pid_t pid = start_run(out);
      const auto delay = std::chrono::microseconds(
          long(std::uniform_real_distribution<double>(0.0, 0.9)(rng) * full_ms * 1000));
      std::this_thread::sleep_for(delay);
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ++kills;
      }
    }
    ASSERT_EQ(run_to_end(out), 0);
    const auto got = snapshot(out);
    EXPECT_EQ(got.size(), expected.size()) << "after " << kills << " kills";
    for (const auto& [path, bytes] : expected) {
      ASSERT_TRUE(got.count(path)) << path << " missing after " << kills << " kills";
      EXPECT_TRUE(got.at(path) == bytes) << path << " differs after " << kills << " kills";
    }
  }
}

TEST(RunResume, ForeignOrCorruptCheckpointsAreRecomputed) {
  const std::string base = temp_dir();
  const std::string reference = base + "/reference";
  ASSERT_EQ(run_to_end(reference), 0);
  const auto expected = snapshot(reference);
  // Truncate one checkpoint and scribble over another: both must be recomputed, not trusted.
  std::vector<fs::path> units;
  for (const auto& e : fs::directory_iterator(reference + "/units")) units.push_back(e.path());
  std::sort(units.begin(), units.end());
  ASSERT_GE(units.size(), 2u);
  const std::string first = read_all(units[0].string());
  write_file(units[0].string(), first.substr(0, first.size() / 2));
  write_file(units[1].string(), "{\"scenario\": \"x\"}");
  ASSERT_EQ(run_to_end(reference), 0);
  EXPECT_TRUE(snapshot(reference) == expected);
}

}  // namespace
}  // namespace ncclbot::test
