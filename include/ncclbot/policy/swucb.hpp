#pragma once
// `swucb:c,window,n0`: sliding-window UCB (Garivier & Moulines, ALT 2011) for drifting latencies,
// as a lower confidence bound on the same relative scale as ucb1.hpp. Only the last `window` real
// observations count (window <= kSwUcbMaxWindow); the prior's n0 pseudo-pulls never expire. With
//   N_i = n0_i + (plays of i among the last `window`), mean_i = (n0_i mu0_i + their sum) / N_i,
//   t = sum_i N_i,
//   - if some arm has N_i = 0, play the lowest such slot (also when an arm fell out of the window);
//   - else play argmin_i mean_i - c * m* * sqrt(2 ln t) / sqrt(N_i),  m* = min_j mean_j.
// Committed arm: argmin of the windowed means.
#include <cmath>

#include "ncclbot/policy/confidence_bound.hpp"

namespace ncclbot {

inline constexpr int kSwUcbMaxWindow = 512;

template <int N>
struct SwUcbPolicyT {
  struct Params {
    double c;
    int window;
    double n0;
  };
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  ArmStatsT<N> stats;                           // count/sum hold prior + windowed observations
  double prior_count[N];                        // n0_i: what count falls back to when the window empties
  double prior_sum[N];
  double inv_sqrt_count[N];                                 // 1 / sqrt(N_i), as in ucb1.hpp (0 while N_i = 0)
  double history_us[kSwUcbMaxWindow];                       // ring buffer of the last `window` observations
  typename ArmSetT<N>::Index history_arm[kSwUcbMaxWindow];  // their packed arm indices
  int head;                                                 // next ring position to write

  NCCLBOT_HD int window() const {
    return params.window < 1 ? 1 : (params.window > kSwUcbMaxWindow ? kSwUcbMaxWindow : params.window);
  }

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    stats.reset(ctx, params.n0, ObsScale::kLinear);
    for (int j = 0; j < stats.arms.k; ++j) {
      prior_count[j] = stats.count[j];
      prior_sum[j] = stats.sum[j];
      inv_sqrt_count[j] = stats.count[j] > 0.0 ? 1.0 / sqrt(stats.count[j]) : 0.0;
    }
    head = 0;
  }

  NCCLBOT_HD int select(StepRandom&) { return confidence_bound_select(stats, inv_sqrt_count, params.c); }
  // With decisions pending: each counts as a pull at its arm's current mean (confidence_bound.hpp).
  NCCLBOT_HD int select_pending(StepRandom&, const PendingPullsT<N>& pending) {
    return confidence_bound_select_pending(stats, inv_sqrt_count, params.c, pending);
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    const int w = window();
    if (stats.plays >= w) {  // evict the observation that leaves the window
      const int old = history_arm[head];
      stats.count[old] -= 1.0;
      stats.total -= 1.0;
      if (stats.count[old] == prior_count[old]) {
        stats.sum[old] = prior_sum[old];  // exact, no drift from add/subtract pairs
        if (stats.count[old] == 0.0) ++stats.untried;
      } else {
        stats.sum[old] -= history_us[head];
      }
      stats.mean[old] = stats.count[old] > 0.0 ? stats.sum[old] / stats.count[old] : 0.0;
      inv_sqrt_count[old] = stats.count[old] > 0.0 ? 1.0 / sqrt(stats.count[old]) : 0.0;
    }
    const int j = stats.arms.index[slot];
    history_us[head] = latency_us;
    history_arm[head] = typename ArmSetT<N>::Index(j);
    head = head + 1 == w ? 0 : head + 1;
    stats.add(j, latency_us);
    inv_sqrt_count[j] = 1.0 / sqrt(stats.count[j]);
  }

  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  // Learned fields (arm_stats.hpp): the ring holds min(plays, window) entries; the prior's share
  // is rebuilt by reset().
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    f(inv_sqrt_count, stats.arms.k, 0.0, HUGE_VAL);
    const int kept = stats.plays < window() ? int(stats.plays) : window();
    f(history_us, kept, -HUGE_VAL, HUGE_VAL);
    f(history_arm, kept, 0.0, double(stats.arms.k - 1));
    // Until the ring is full, the next write goes right after the kept entries.
    f(&head, 1, kept < window() ? double(kept) : 0.0, kept < window() ? double(kept) : double(window() - 1));
  }
};
using SwUcbPolicy = SwUcbPolicyT<kNumArms>;

}  // namespace ncclbot
