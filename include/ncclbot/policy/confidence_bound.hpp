#pragma once
// The lower-confidence-bound argmin shared by UCB1, SW-UCB and D-UCB: the first packed arm j (ties:
// lowest slot) minimising  mean_j - scale * inv_sqrt_count_j. Comparisons are exact, so every way
// below gives the arm that filling an index array and calling first_index_of_min() gives
// (LowerConfidenceArgmin.EveryWayEqualsTheTwoPassDefinition), and each build uses the one its
// processor runs fastest:
//   - the CPU: one pass computes every index and their minimum, then a scan finds the first arm at
//     that minimum. The scan's branches are well predicted (the argmin moves on about 0.2% of
//     steps), so the core speculates the arm and starts the next step before the minimum is known;
//     an arm computed as data makes every step wait for the one before: with selects (the chains
//     below) UCB1 replayed 8% slower than with the scalar scan, with a compare mask's lowest set
//     bit 13% slower. The host build does the pass and the scan in pairs of doubles
//     (core/host_double_pair.hpp), about a fifth faster than the scalar scan (docs/performance.md
//     has the side-by-side measurement). nvcc's host compilations keep the scalar scan;
//   - the GPU: each of four chains keeps its first arm at its minimum too, and the winners are
//     merged with selects. No index array (a 168-byte stack frame per thread) and no scan (whose
//     trip count differs between the lanes of a warp).
#include <cmath>

#include "ncclbot/core/host_double_pair.hpp"
#include "ncclbot/policy/arm_stats.hpp"

namespace ncclbot {

// UCB's exploration term sqrt(2 ln t) for a total of t (pseudo-)pulls. With a fractional prior
// weight (0 < n0 < 1) t can start below 1, where ln t < 0 would make the root NaN; no pull count
// below one earns exploration, so the term is 0 there, and t >= 1 is the textbook value.
NCCLBOT_HD inline double exploration_bonus(double total) {
  return total > 1.0 ? sqrt(2.0 * portable_log(total)) : 0.0;
}

template <int N>
NCCLBOT_HD int lower_confidence_argmin_scan(const ArmStatsT<N>& stats, const double* inv_sqrt_count,
                                            double scale) {
  const int k = stats.arms.k;
  double index[N];
  double m[4] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};
  int j = 0;
  for (; j + 3 < k; j += 4)
    for (int l = 0; l < 4; ++l) {
      const double x = stats.mean[j + l] - scale * inv_sqrt_count[j + l];
      index[j + l] = x;
      m[l] = x < m[l] ? x : m[l];
    }
  for (; j < k; ++j) {
    const double x = stats.mean[j] - scale * inv_sqrt_count[j];
    index[j] = x;
    m[0] = x < m[0] ? x : m[0];
  }
  m[0] = m[1] < m[0] ? m[1] : m[0];
  m[2] = m[3] < m[2] ? m[3] : m[2];
  const double lowest = m[2] < m[0] ? m[2] : m[0];
  int a = 0;
  while (a < k - 1 && index[a] != lowest) ++a;
  return a;
}

template <int N>
NCCLBOT_HD int lower_confidence_argmin_chains(const ArmStatsT<N>& stats, const double* inv_sqrt_count,
                                              double scale) {
  const int k = stats.arms.k;
  // Chain l keeps the smallest index value of arms l, l + 4, ... and the first arm holding it
  // (strict '<'); the tail arms go to chain 0, after its earlier arms.
  double m[4] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};
  int at[4] = {0, 0, 0, 0};
  int j = 0;
  for (; j + 3 < k; j += 4)
    for (int l = 0; l < 4; ++l) {
      const double x = stats.mean[j + l] - scale * inv_sqrt_count[j + l];
      const bool lower = x < m[l];
      m[l] = lower ? x : m[l];
      at[l] = lower ? j + l : at[l];
    }
  for (; j < k; ++j) {
    const double x = stats.mean[j] - scale * inv_sqrt_count[j];
    const bool lower = x < m[0];
    m[0] = lower ? x : m[0];
    at[0] = lower ? j : at[0];
  }
  // The chains' winners: the smaller value, and on equal values the lower arm.
  const auto take = [&](int a, int b) {
    const bool second = m[b] < m[a] || (m[b] == m[a] && at[b] < at[a]);
    m[a] = second ? m[b] : m[a];
    at[a] = second ? at[b] : at[a];
  };
  take(0, 1);
  take(2, 3);
  take(0, 2);
  return at[0];
}

#if !defined(__CUDACC__)
// The CPU's pass and scan two arms at a time: the same products, differences and comparisons as
// lower_confidence_argmin_scan(), so the same arm.
template <int N>
inline int lower_confidence_argmin_pairs(const ArmStatsT<N>& stats, const double* inv_sqrt_count,
                                         double scale) {
  using D2 = HostDoublePair;
  const int k = stats.arms.k;
  const D2 s = {scale, scale};
  double index[N];
  D2 m0 = {HUGE_VAL, HUGE_VAL}, m1 = m0;
  int j = 0;
  for (; j + 3 < k; j += 4) {
    const D2 a = load_pair(stats.mean + j) - s * load_pair(inv_sqrt_count + j);
    const D2 b = load_pair(stats.mean + j + 2) - s * load_pair(inv_sqrt_count + j + 2);
    store_pair(index + j, a);
    store_pair(index + j + 2, b);
    m0 = a < m0 ? a : m0;
    m1 = b < m1 ? b : m1;
  }
  double lowest = HUGE_VAL;
  for (; j < k; ++j) {
    const double x = stats.mean[j] - scale * inv_sqrt_count[j];
    index[j] = x;
    lowest = x < lowest ? x : lowest;
  }
  m0 = m1 < m0 ? m1 : m0;
  lowest = m0[0] < lowest ? m0[0] : lowest;
  lowest = m0[1] < lowest ? m0[1] : lowest;
  // Branches, not a computed position: the arm must come from the predicted path (see above).
  const D2 at_lowest = {lowest, lowest};
  int a = 0;
  for (; a + 1 < k; a += 2) {
    const auto equal = load_pair(index + a) == at_lowest;
    if (equal[0]) return a;
    if (equal[1]) return a + 1;
  }
  return k - 1;
}
#endif

template <int N>
NCCLBOT_HD int lower_confidence_argmin(const ArmStatsT<N>& stats, const double* inv_sqrt_count,
                                       double scale) {
#ifdef __CUDA_ARCH__
  return lower_confidence_argmin_chains(stats, inv_sqrt_count, scale);
#elif defined(__CUDACC__)
  return lower_confidence_argmin_scan(stats, inv_sqrt_count, scale);
#else
  return lower_confidence_argmin_pairs(stats, inv_sqrt_count, scale);
#endif
}

// select() of a UCB policy that computes its own exploration term (SW-UCB, D-UCB): an unobserved
// arm first (lowest slot), else the lower-confidence argmin at c * m* * sqrt(2 ln t).
template <int N>
NCCLBOT_HD int confidence_bound_select(const ArmStatsT<N>& stats, const double* inv_sqrt_count, double c) {
  const int k = stats.arms.k;
  if (k == 0) return -1;
  if (stats.untried > 0) return stats.arms.slot[stats.first_untried()];
  const double scale = c * min_of(stats.mean, k) * exploration_bonus(stats.total);
  return stats.arms.slot[lower_confidence_argmin(stats, inv_sqrt_count, scale)];
}

// confidence_bound_select() with decisions pending (policy_context.hpp, PendingPulls): each pending
// pull of arm i counts as one more observation at mean_i, so with p_i pending and P in all
//   - an arm with neither an observation nor a pending pull goes first (lowest slot);
//   - while some arm is unobserved but every such arm has a pull pending, the arm with the fewest
//     pulls N_i + p_i (lowest slot): an unobserved arm has no estimate to hallucinate at, so the
//     batch keeps spreading over the arms until their first latencies arrive;
//   - else the lower-confidence argmin of mean_i - c * m* * sqrt(2 ln(t + P)) / sqrt(N_i + p_i),
//     passing over blind bets (ArmStats::blind_bets: once some latency has arrived, an arm whose
//     estimate is still its prior alone and that has a pull pending).
// With nothing pending this is confidence_bound_select() bit for bit (an arm with p_i = 0 reads its
// stored 1 / sqrt(N_i), the same IEEE value).
template <int N>
NCCLBOT_HD int confidence_bound_select_pending(const ArmStatsT<N>& stats, const double* inv_sqrt_count,
                                               double c, const PendingPullsT<N>& pending) {
  const int k = stats.arms.k;
  if (k == 0) return -1;
  if (stats.untried > 0) {
    int fewest = 0;
    double fewest_pulls = HUGE_VAL;
    for (int j = 0; j < k; ++j) {
      const double pulls = stats.count[j] + double(pending.count[stats.arms.slot[j]]);
      if (pulls == 0.0) return stats.arms.slot[j];
      if (pulls < fewest_pulls) {
        fewest_pulls = pulls;
        fewest = j;
      }
    }
    return stats.arms.slot[fewest];
  }
  double inv[N];
  for (int j = 0; j < k; ++j) {
    const int p = pending.count[stats.arms.slot[j]];
    inv[j] = p == 0 ? inv_sqrt_count[j] : 1.0 / sqrt(stats.count[j] + double(p));
  }
  const double scale = c * min_of(stats.mean, k) * exploration_bonus(stats.total + double(pending.total));
  const ArmIndexSet<N> skip = stats.blind_bets(pending);
  if (skip.empty()) return stats.arms.slot[lower_confidence_argmin(stats, inv, scale)];
  int best = -1;
  double lowest = HUGE_VAL;
  for (int j = 0; j < k; ++j) {
    const double x = stats.mean[j] - scale * inv[j];
    if (!skip.has(j) && (best < 0 || x < lowest)) {
      best = j;
      lowest = x;
    }
  }
  return stats.arms.slot[best];  // some arm is no blind bet (ArmStats::blind_bets)
}

}  // namespace ncclbot
