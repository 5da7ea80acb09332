// A latency outside what `ope` and `telemetry` read (decision_log::latency_measurable: 0.001 us to
// 10^9 us) is no measurement: the plugin neither learns from nor logs it, counts it in the tuner's
// finalize line, and the next good latency is still logged with its own call's decision.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/log/decision_log.hpp"
#include "plugin/standin_nccl.hpp"
#include "support/run_cli.hpp"

namespace {

struct LocalGreedy {
  ncclbot::test::EnvVar mode{"NCCLBOT_MODE", "online"}, policy{"NCCLBOT_POLICY", "greedy:n0=0"},
      agree{"NCCLBOT_AGREEMENT", "local"};
};

}  // namespace

TEST(UnmeasurableLatency, ReportedValuesOutsideTheReadersRangeAreDroppedAndCounted) {
  using ncclbot::test::plugin;
  LocalGreedy online;
  const std::string log = ncclbot::test::temp_dir() + "/reported.log";
  ncclbot::test::EnvVar log_env("NCCLBOT_LOG", log);
  ncclbot::test::clear_log();
  void* tuner = nullptr;
  ASSERT_EQ(plugin().v5->init(&tuner, 0x5e1, 1, 1, ncclbot::test::recording_logger, nullptr, nullptr),
            kNcclSuccess);
  // 1e-300 and the smallest denormal are below a nanosecond, 1e300 and 2e9 us (2000 s) above 1000 s.
  for (const double us : {1e-300, 1e300, 4.9e-324, 2e9}) {
    ncclbot::test::CostTable7x3 t = ncclbot::test::two_arms();
    int nch = 0;
    ASSERT_EQ(plugin().v5->getCollInfo(tuner, 4, 4096, 1, t.ptr(), 7, 3, 0, &nch), kNcclSuccess);
    const int arm = t.pick();
    EXPECT_NE(plugin().report(0x5e1, 1, 1, 4, 4096, arm / 3, arm % 3, us), 0) << us;  // not taken
  }
  ASSERT_EQ(plugin().v5->finalize(tuner), kNcclSuccess);
  EXPECT_TRUE(ncclbot::test::logged(
      kNcclLogInfo,
      "4 decisions, 0 measured latencies, 4 latencies outside [0.001, 1e+09] us or untimed dropped"));
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  EXPECT_TRUE(data.calls.empty());
  EXPECT_EQ(data.files.at(0).skipped_latencies, 0u);  // none was written to skip
}

// Through the profiler: a collective timed at 3000 s and one whose channel's stop timer is
// UINT64_MAX are dropped; calls 0, 2 and 4 are logged with their own indices and latencies.
TEST(UnmeasurableLatency, ProfilerTimesOutsideTheRangeAreDroppedAndTheOthersLoggedAsTheirCalls) {
  LocalGreedy online;
  const std::string log = ncclbot::test::temp_dir() + "/profiled.log";
  ncclbot::test::EnvVar log_env("NCCLBOT_LOG", log);
  ncclbot::test::clear_log();
  {
    ncclbot::test::StandInNccl comm(ncclbot::test::kNccl229, 0x5e2, 1, 1);
    const ncclbot::test::CostTable7x3 t = ncclbot::test::two_arms();
    const std::vector<double> latency = {100.0, 3e9, 101.0, 50.0, 102.0};
    for (size_t call = 0; call < latency.size(); ++call) {
      if (call == 3) comm.stop_next_channels_at(UINT64_MAX);
      comm.group({{4, 4096}}, t, false, [&](size_t, int) { return latency[call]; });
    }
    comm.finalize_profiler();
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_TRUE(ncclbot::test::logged(kNcclLogInfo, "3 measured latencies, 2 latencies outside"));
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  ASSERT_EQ(data.calls.size(), 3u);
  const uint64_t index[] = {0, 2, 4};
  const double us[] = {100.0, 101.0, 102.0};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(data.calls[i].call_index, index[i]) << i;
    EXPECT_EQ(data.calls[i].latency_us, us[i]) << i;
    EXPECT_EQ(data.calls[i].propensity, 1.0) << i;  // greedy: the decision's own probability
  }
}
