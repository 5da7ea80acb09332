#pragma once
// `etc:m`: explore-then-commit (Lattimore & Szepesvari 2020, ch. 6; STAR-MPI's practice). Plays
// the K valid arms round-robin in slot order m times (steps 0 .. mK-1: arm[t mod K]), then commits
// for good to the arm with the smallest empirical mean (ties: lowest slot) and never revisits the
// choice. m = 1 is "probe each arm once, keep the fastest". It ignores the prior (a prior-guided
// ETC is `greedy`). Committed arm while still probing: argmin over the arms probed so far.
#include "ncclbot/policy/arm_stats.hpp"

namespace ncclbot {

template <int N>
struct ExploreThenCommitPolicyT {
  struct Params {
    int m;
  };
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  ArmStatsT<N> stats;
  int committed;  // packed arm index once exploration is over, else -1

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    stats.reset(ctx, 0.0, ObsScale::kLinear);
    committed = -1;
  }

  NCCLBOT_HD int select(StepRandom&) {
    const int k = stats.arms.k;
    if (k == 0) return -1;
    if (committed >= 0) return stats.arms.slot[committed];
    const int probes = (params.m < 1 ? 1 : params.m) * k;
    if (stats.plays < probes) return stats.arms.slot[stats.plays % k];
    committed = stats.argmin_mean();
    return stats.arms.slot[committed];
  }

  // With decisions pending: probes already issued count as made, so a batch issues the next probes
  // in order; once every probe is issued but some latencies are still to come, it plays the best
  // mean observed so far (the first valid slot before any), and commits only on all m * k of them.
  NCCLBOT_HD int select_pending(StepRandom& rng, const PendingPullsT<N>& pending) {
    const int k = stats.arms.k;
    if (k == 0 || committed >= 0) return select(rng);
    const int probes = (params.m < 1 ? 1 : params.m) * k;
    const int64_t issued = stats.plays + pending.total;
    if (issued < probes) return stats.arms.slot[issued % k];
    if (stats.plays < probes) return stats.committed_slot();
    return select(rng);
  }

  NCCLBOT_HD void update(int slot, double latency_us) { stats.add(stats.arms.index[slot], latency_us); }

  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    f(&committed, 1, -1.0, double(stats.arms.k - 1));
  }
  NCCLBOT_HD int commit(StepRandom&) const {
    if (committed >= 0) return stats.arms.slot[committed];
    return stats.committed_slot();
  }
};
using ExploreThenCommitPolicy = ExploreThenCommitPolicyT<kNumArms>;

}  // namespace ncclbot
