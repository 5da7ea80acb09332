#pragma once
// `ducb:c,gamma,n0`: discounted UCB (Garivier & Moulines, ALT 2011) for drifting latencies, as a
// lower confidence bound on the same relative scale as ucb1.hpp. After every call each arm's real
// observations are discounted by gamma, so an observation s calls old weighs gamma^s; the prior's
// n0 pseudo-pulls never decay (as in swucb.hpp). With
//   D_i = sum over past calls s of gamma^(t-1-s) [a_s = i],  Y_i = the same sum of latencies,
//   N_i = n0_i + D_i,  mean_i = (n0_i mu0_i + Y_i) / N_i,  t = sum_i N_i,
//   - if some arm has N_i = 0, play the lowest such slot (the cold start: each arm once);
//   - else play argmin_i mean_i - c * m* * sqrt(2 ln t) / sqrt(N_i),  m* = min_j mean_j.
// Where SW-UCB forgets abruptly after `window` calls, D-UCB forgets smoothly with an effective
// memory of about 1 / (1 - gamma) calls; gamma = 1 never forgets. Committed arm: argmin of the
// discounted means.
#include <cmath>

#include "ncclbot/policy/confidence_bound.hpp"

namespace ncclbot {

template <int N>
struct DiscountedUcbPolicyT {
  struct Params {
    double c;
    double gamma;
    double n0;
  };
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  ArmStatsT<N> stats;  // count/sum/mean/total: prior + discounted observations, recomputed per update
  double prior_count[N];
  double prior_sum[N];
  double discounted_count[N];
  double discounted_sum[N];
  double inv_sqrt_count[N];

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    stats.reset(ctx, params.n0, ObsScale::kLinear);
    for (int j = 0; j < stats.arms.k; ++j) {
      prior_count[j] = stats.count[j];
      prior_sum[j] = stats.sum[j];
      discounted_count[j] = 0.0;
      discounted_sum[j] = 0.0;
      inv_sqrt_count[j] = stats.count[j] > 0.0 ? 1.0 / sqrt(stats.count[j]) : 0.0;
    }
  }

  NCCLBOT_HD int select(StepRandom&) { return confidence_bound_select(stats, inv_sqrt_count, params.c); }
  // With decisions pending: each counts as a pull at its arm's current mean (confidence_bound.hpp).
  NCCLBOT_HD int select_pending(StepRandom&, const PendingPullsT<N>& pending) {
    return confidence_bound_select_pending(stats, inv_sqrt_count, params.c, pending);
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    const int played = stats.arms.index[slot];
    double total = 0.0;
    int untried = 0;
    for (int j = 0; j < stats.arms.k; ++j) {
      discounted_count[j] *= params.gamma;
      discounted_sum[j] *= params.gamma;
      if (j == played) {
        discounted_count[j] += 1.0;
        discounted_sum[j] += latency_us;
      }
      const double n = prior_count[j] + discounted_count[j];
      stats.count[j] = n;
      stats.sum[j] = prior_sum[j] + discounted_sum[j];
      stats.mean[j] = n > 0.0 ? stats.sum[j] / n : 0.0;
      inv_sqrt_count[j] = n > 0.0 ? 1.0 / sqrt(n) : 0.0;
      if (n == 0.0) ++untried;  // an unprimed arm whose discounted weight underflowed
      total += n;
    }
    stats.total = total;
    stats.untried = untried;
    stats.prior_only.clear(played);
    ++stats.plays;
  }

  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  // Learned fields (arm_stats.hpp); the prior's share is rebuilt by reset().
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    f(discounted_count, stats.arms.k, 0.0, HUGE_VAL);
    f(discounted_sum, stats.arms.k, -HUGE_VAL, HUGE_VAL);
    f(inv_sqrt_count, stats.arms.k, 0.0, HUGE_VAL);
  }
};
using DiscountedUcbPolicy = DiscountedUcbPolicyT<kNumArms>;

}  // namespace ncclbot
