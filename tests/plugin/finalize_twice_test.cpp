// A context finalized twice is a misuse NCCL does not make, but the plugin must not take its host
// down with it: the second finalize frees nothing, returns success and warns once. Each check runs
// in a child process, so the old double free (an abort) fails the test instead of the program.
#include <gtest/gtest.h>

#include <cstdlib>

#include "plugin/plugin_loader.hpp"

namespace {

// Exits 0 when the two finalizes of each context returned success and `warning` was logged once.
[[noreturn]] void finalize_each_twice_then_exit(const char* warning, bool profiler) {
  using ncclbot::test::plugin;
  int bad = 0;
  for (int i = 0; i < 2; ++i) {
    void* ctx = nullptr;
    int mask = 0;
    if (profiler)
      bad +=
          plugin().prof6->init(&ctx, 600 + i, &mask, "twice", 1, 1, 0, ncclbot::test::recording_logger) != 0;
    else
      bad += plugin().v6->init(&ctx, 600 + i, 8, 1, ncclbot::test::recording_logger, nullptr, nullptr) != 0;
    if (ctx == nullptr) std::_Exit(4);
    const auto finalize = profiler ? plugin().prof6->finalize : plugin().v6->finalize;
    bad += finalize(ctx) != kNcclSuccess;
    bad += finalize(ctx) != kNcclSuccess;
  }
  size_t warnings = 0;
  for (const ncclbot::test::LogLine& l : ncclbot::test::log_lines())
    warnings += l.level == kNcclLogWarn && l.text.find(warning) != std::string::npos;
  std::_Exit(bad != 0 ? 2 : warnings != 1 ? 3 : 0);
}

}  // namespace

TEST(FinalizeTwice, ASecondTunerFinalizeFreesNothingAndWarnsOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ncclbot::test::EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0"),
      agree("NCCLBOT_AGREEMENT", "local");
  EXPECT_EXIT(finalize_each_twice_then_exit("tuner finalize of a context that is not live", false),
              ::testing::ExitedWithCode(0), "");
}

TEST(FinalizeTwice, ASecondProfilerFinalizeFreesNothingAndWarnsOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(finalize_each_twice_then_exit("profiler finalize of a context that is not live", true),
              ::testing::ExitedWithCode(0), "");
}
