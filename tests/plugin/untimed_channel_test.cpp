// A collective with a kernel channel that has no valid stop timer (none recorded, or one before its
// start) has no known latency, as the latency is the maximum over its channels: the plugin neither
// learns from nor logs it, counts it in the tuner's finalize line, and still takes it as its own
// call's answer, so every later latency is logged with its own call's decision.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/log/decision_log.hpp"
#include "plugin/standin_nccl.hpp"
#include "support/run_cli.hpp"

namespace {

using Fault = ncclbot::test::StandInNccl::ChannelFault;

struct UntimedLocalGreedy {
  ncclbot::test::EnvVar mode{"NCCLBOT_MODE", "online"}, policy{"NCCLBOT_POLICY", "greedy:n0=0"},
      agree{"NCCLBOT_AGREEMENT", "local"};
};

// Five AllReduce calls of 100..104 us through NCCL 2.29's events; call 1's first `channels` of its
// two channels go wrong with `fault`. Returns the decision log read back.
ncclbot::DecisionLogData play_with_untimed_call(const std::string& name, Fault fault, int channels) {
  UntimedLocalGreedy online;
  const std::string log = ncclbot::test::temp_dir() + "/" + name;
  ncclbot::test::EnvVar log_env("NCCLBOT_LOG", log);
  ncclbot::test::clear_log();
  {
    ncclbot::test::StandInNccl comm(ncclbot::test::kNccl229, 0x5e3, 1, 1);
    const ncclbot::test::CostTable7x3 t = ncclbot::test::two_arms();
    for (int call = 0; call < 5; ++call) {
      if (call == 1) comm.fault_next_channels(fault, channels);
      comm.group({{4, 4096}}, t, false, [&](size_t, int) { return 100.0 + call; });
    }
    comm.finalize_profiler();
    EXPECT_EQ(comm.failures(), 0);
  }
  return ncclbot::read_decision_logs({log});
}

// Calls 0, 2, 3 and 4 logged as themselves; call 1 counted and left out.
void expect_call_one_left_out(const ncclbot::DecisionLogData& data, const char* what) {
  EXPECT_TRUE(ncclbot::test::logged(kNcclLogInfo, "4 measured latencies, 1 latencies outside")) << what;
  ASSERT_EQ(data.calls.size(), 4u) << what;
  const uint64_t index[] = {0, 2, 3, 4};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(data.calls[i].call_index, index[i]) << what << " record " << i;
    EXPECT_EQ(data.calls[i].latency_us, 100.0 + double(index[i])) << what << " record " << i;
    EXPECT_EQ(data.calls[i].propensity, 1.0) << what << " record " << i;  // greedy: its own decision
  }
}

}  // namespace

TEST(UntimedChannel, ACallWhoseChannelsStopBeforeTheyStartAnswersItsOwnDecision) {
  expect_call_one_left_out(play_with_untimed_call("backwards.log", Fault::kStopBeforeStart, 2), "backwards");
}

TEST(UntimedChannel, ACallWhoseChannelsStopWithoutAStopStateAnswersItsOwnDecision) {
  expect_call_one_left_out(play_with_untimed_call("nostate.log", Fault::kNoStopState, 2), "no stop state");
}

// The untimed channel is the shorter one here; the other's span is no maximum over all channels.
TEST(UntimedChannel, OneUntimedChannelOfTwoLeavesTheCallUnmeasured) {
  expect_call_one_left_out(play_with_untimed_call("one_of_two.log", Fault::kNoStopState, 1), "one of two");
  expect_call_one_left_out(play_with_untimed_call("one_backwards.log", Fault::kStopBeforeStart, 1),
                           "one of two backwards");
}
