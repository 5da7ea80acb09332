#pragma once
// `ucb1:c,n0`: UCB1 (Auer, Cesa-Bianchi, Fischer 2002) turned into a lower confidence bound for
// latencies, with the prior as n0 pseudo-pulls (arm_stats.hpp). With N_i, mean_i from ArmStats and
// t = sum_i N_i:
//   - if some arm has N_i = 0, play the lowest such slot (cold start: each arm once);
//   - else play argmin_i  mean_i - c * m* * sqrt(2 ln t) / sqrt(N_i),  m* = min_j mean_j
//     (ties: lowest slot).
// Why m*: UCB1's bonus assumes rewards of range 1 (Auer et al. state it for rewards in [0, 1]); in
// raw µs it is negligible (pure greedy) and on unit-free values it dominates (docs/replay.md,
// "Policies"). Scaling by the current best estimate makes it UCB1 on latencies relative to the best
// arm, i.e. on the regret ratio the losses are measured in, so one c fits 5 µs and 50 ms contexts
// alike; c is MABWiser's `alpha` on that scale. ln is portable_log and sqrt is IEEE, so the index is
// bit-identical in every build.
// Committed arm: argmin of the means.
//
// sqrt(2 ln t) (exploration_bonus(), 0 while t <= 1, which a prior weight n0 < 1 can give) costs a
// portable_log and a sqrt on the step's critical path, yet t = t0 + plays takes the same values in
// every replay of one (config, context) whatever the seed. The CPU engine therefore may pass a
// table of those values at select time (SelectAids; replay/exploration_table.hpp: entry p is
// computed from t0 + 1 + ... + 1, p additions, exactly as ArmStats accumulates `total`), so the
// index is bit-identical with and without it. A table built for another starting total is ignored.
// The CUDA kernels and the tuner plugin pass none and compute the value.
//
// Over knob arms (N > kNumArms) the host finds m* through per-block minima (arm_blocks.hpp) and, in
// contexts of at least KineticArgminT::kMinArms arms, the argmin through a kinetic tournament
// (kinetic_argmin.hpp): the same arm, without reading every arm on every call.
#include <cmath>

#include "ncclbot/policy/arm_blocks.hpp"
#include "ncclbot/policy/confidence_bound.hpp"
#include "ncclbot/policy/kinetic_argmin.hpp"

namespace ncclbot {

template <int N>
struct Ucb1PolicyT {
  struct Params {
    double c;
    double n0;
  };
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  ArmStatsT<N> stats;
  double inv_sqrt_count[N];  // 1 / sqrt(N_i), refreshed when N_i changes
  double start_total;        // sum of N_i after reset(): which exploration table fits
  // Engine caches derived from mean and inv_sqrt_count, never state; used where kUsed.
  [[no_unique_address]] ArmBlocksT<N> blocks;
  [[no_unique_address]] KineticArgminT<N> tournament;

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    stats.reset(ctx, params.n0, ObsScale::kLinear);
    start_total = stats.total;
    for (int j = 0; j < stats.arms.k; ++j)
      inv_sqrt_count[j] = stats.count[j] > 0.0 ? 1.0 / sqrt(stats.count[j]) : 0.0;
    build_caches();
  }

  NCCLBOT_HD void build_caches() {
    if constexpr (ArmBlocksT<N>::kUsed) {
      blocks.build(stats);
      tournament.build(stats);
    }
  }

  NCCLBOT_HD int select(StepRandom& rng) { return select(rng, SelectAids{}); }

  NCCLBOT_HD int select(StepRandom&, const SelectAids& aids) {
    const int k = stats.arms.k;
    if (k == 0) return -1;
    if (stats.untried > 0) return stats.arms.slot[stats.first_untried()];
    const double bonus = aids.exploration && aids.exploration_total0 == start_total
                             ? aids.exploration[stats.plays]
                             : exploration_bonus(stats.total);
    if constexpr (ArmBlocksT<N>::kUsed) {
      const double scale = params.c * blocks.lowest() * bonus;
      if (tournament.active) return stats.arms.slot[tournament.argmin(stats, inv_sqrt_count, scale)];
      return stats.arms.slot[lower_confidence_argmin(stats, inv_sqrt_count, scale)];
    }
    const double scale = params.c * min_of(stats.mean, k) * bonus;
    return stats.arms.slot[lower_confidence_argmin(stats, inv_sqrt_count, scale)];
  }

  // With decisions pending: each counts as a pull at its arm's current mean (confidence_bound.hpp).
  // The bonus's total then differs from every table entry, so it is computed here.
  NCCLBOT_HD int select_pending(StepRandom&, const PendingPullsT<N>& pending) {
    return confidence_bound_select_pending(stats, inv_sqrt_count, params.c, pending);
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    const int j = stats.arms.index[slot];
    stats.add(j, latency_us);
    inv_sqrt_count[j] = 1.0 / sqrt(stats.count[j]);
    if constexpr (ArmBlocksT<N>::kUsed) {
      blocks.refresh(stats, j);
      tournament.moved(j);
    }
  }

  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  // Learned fields (arm_stats.hpp); the bonus table is an engine cache, never state.
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
    f(inv_sqrt_count, stats.arms.k, 0.0, HUGE_VAL);
    build_caches();
  }
};
using Ucb1Policy = Ucb1PolicyT<kNumArms>;

}  // namespace ncclbot
