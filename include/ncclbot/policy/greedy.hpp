#pragma once
// `greedy:n0`: deterministic, warm-started from the prior. With N_i and mean_i of arm_stats.hpp
// (n0 pseudo-pulls at the prior's value), it plays the lowest-slot arm with N_i = 0 if any, else
// argmin_i mean_i (ties: lowest slot). n0 = 0: play each arm once, then exploit. Committed arm:
// argmin of the means over the arms observed so far. Over knob arms the host finds the argmin
// through per-block minima (arm_blocks.hpp): the same arm.
#include "ncclbot/policy/arm_blocks.hpp"

namespace ncclbot {

template <int N>
struct GreedyPolicyT {
  struct Params {
    double n0;
  };
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  ArmStatsT<N> stats;
  [[no_unique_address]] ArmBlocksT<N> blocks;  // derived from mean, used where kUsed

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    stats.reset(ctx, params.n0, ObsScale::kLinear);
    if constexpr (ArmBlocksT<N>::kUsed) blocks.build(stats);
  }
  NCCLBOT_HD int select(StepRandom&) {
    if (stats.arms.k == 0) return -1;
    if (stats.untried > 0) return stats.arms.slot[stats.first_untried()];
    if constexpr (ArmBlocksT<N>::kUsed) return stats.arms.slot[blocks.argmin_mean(stats)];
    return stats.arms.slot[stats.argmin_mean()];
  }
  // With decisions pending (policy_context.hpp): a pull at an arm's current mean changes no mean, so
  // only the cold start (ArmStats::cold_start_pending) and blind bets (ArmStats::blind_bets: a
  // prior-only arm with a pull pending, once some latency has arrived) differ.
  NCCLBOT_HD int select_pending(StepRandom&, const PendingPullsT<N>& pending) {
    if (stats.arms.k == 0) return -1;
    return stats.arms.slot[stats.greedy_pending(pending)];
  }
  NCCLBOT_HD void update(int slot, double latency_us) {
    const int j = stats.arms.index[slot];
    stats.add(j, latency_us);
    if constexpr (ArmBlocksT<N>::kUsed) blocks.refresh(stats, j);
  }
  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    if constexpr (ArmBlocksT<N>::kUsed) blocks.build(stats);
  }
};
using GreedyPolicy = GreedyPolicyT<kNumArms>;

}  // namespace ncclbot
