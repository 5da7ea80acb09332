// plugin_check's building blocks on a hand-made sweep: NCCL's cost table of a context (the prior
// on the measured arms, -1 on every other entry), a context it cannot check (the simulated HiPIPE
// arm has no entry in NCCL's table), and the replay reference it compares the plugin with.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "plugin_check/context_check.hpp"

// A namespace of its own: the test programs are unity builds, and plugin_loader.hpp's CostTable7x3
// is seen by name in the other files of this one.
namespace plugin_check_context_test {

namespace pc = ncclbot::plugin_check;
using ncclbot::Algo;
using ncclbot::arm_slot;
using ncclbot::Proto;
using ncclbot::Sweep;

constexpr const char* kSweepHeader =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n";

// One all-reduce context (2 nodes x 8 GPUs, 1 KiB): Tree/LL measured 12.5 and 13.5 us with a prior
// of 10, Ring/Simple 30 and 31 us with a prior of 20; `extra` adds rows.
Sweep plugin_check_sweep(const std::string& extra = "") {
  std::istringstream in(std::string(kSweepHeader) +
                        "h,allreduce,2,8,1024,Tree,LL,0,12.5,10\n"
                        "h,allreduce,2,8,1024,Tree,LL,1,13.5,10\n"
                        "h,allreduce,2,8,1024,Ring,Simple,0,30,20\n"
                        "h,allreduce,2,8,1024,Ring,Simple,1,31,20\n" +
                        extra);
  return ncclbot::parse_sweep_csv(in, "hand_made.csv");
}

TEST(PluginCheckCostTable, ThePriorOnMeasuredArmsAndMinusOneOnEveryOtherEntry) {
  const Sweep sweep = plugin_check_sweep();
  pc::CostTable7x3 table;
  std::string skipped;
  ASSERT_TRUE(pc::context_cost_table(sweep.view(), 0, &table, &skipped)) << skipped;
  for (int a = 0; a < ncclbot::kNumNcclAlgos; ++a)
    for (int p = 0; p < ncclbot::kNumProtos; ++p) {
      const int slot = a * ncclbot::kNumProtos + p;
      const float want = slot == arm_slot(Algo::kTree, Proto::kLL)       ? 10.0f
                         : slot == arm_slot(Algo::kRing, Proto::kSimple) ? 20.0f
                                                                         : -1.0f;
      EXPECT_EQ(table.t[a][p], want) << "algo " << a << " proto " << p;
    }
}

TEST(PluginCheckCostTable, AContextWithTheSimulatedHiPipeArmIsSkippedWithTheReason) {
  const Sweep sweep = plugin_check_sweep(
      "h,allreduce,2,8,1024,HiPIPE,Simple,0,9,5\nh,allreduce,2,8,1024,HiPIPE,Simple,1,9.5,5\n");
  pc::CostTable7x3 table;
  std::string skipped;
  EXPECT_FALSE(pc::context_cost_table(sweep.view(), 0, &table, &skipped));
  EXPECT_NE(skipped.find("HiPIPE"), std::string::npos) << skipped;
}

// AUTO plays the arm of the smallest prior (Tree/LL here) at every call, and each call's latency
// is one of that arm's two samples, as replay_draw() re-derives it from the replay's keying.
TEST(PluginCheckReplayReference, AutoPlaysTheSmallestPriorAndEachLatencyIsOneOfItsSamples) {
  const Sweep sweep = plugin_check_sweep();
  pc::CheckSettings settings;
  settings.seed = 7;
  settings.horizon = 40;
  const ncclbot::PolicySpec spec = ncclbot::parse_policy_spec("auto");
  const pc::ReplayReference ref =
      pc::replay_reference(sweep.view(), sweep.context(0), 0, spec, settings, 0, 1, 0);
  ASSERT_EQ(ref.slots.size(), 40u);
  bool saw[2] = {false, false};
  for (int t = 0; t < 40; ++t) {
    EXPECT_EQ(ref.slots[size_t(t)], arm_slot(Algo::kTree, Proto::kLL)) << t;
    const float x = ref.latency[size_t(t)];
    EXPECT_TRUE(x == 12.5f || x == 13.5f) << t << ": " << x;
    saw[x == 13.5f] = true;
    EXPECT_EQ(pc::replay_draw(sweep.view(), 0, ref.slots[size_t(t)], settings.seed, ref.stream_id, t), x)
        << t;
  }
  EXPECT_TRUE(saw[0] && saw[1]);  // seed 7 draws both (any seed misses one with chance 2^-39)
}

}  // namespace plugin_check_context_test
