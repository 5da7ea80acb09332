#pragma once
// The lower-confidence-bound argmin shared by UCB1 and SW-UCB: the first packed arm j (ties: lowest
// slot) minimising  mean_j - scale * inv_sqrt_count_j. One pass computes every index and their
// minimum in four independent chains (min is exact, so the grouping does not change the value),
// then a short scan finds the first arm at that minimum. Same result as filling an index array and
// calling first_index_of_min(), with one pass less over the arms.
#include <cmath>

#include "ncclbot/policy/arm_stats.hpp"

namespace ncclbot {

// UCB's exploration term sqrt(2 ln t) for a total of t (pseudo-)pulls. With a fractional prior
// weight (0 < n0 < 1) t can start below 1, where ln t < 0 would make the root NaN; no pull count
// below one earns exploration, so the term is 0 there, and t >= 1 is the textbook value.
NCCLBOT_HD inline double exploration_bonus(double total) {
  return total > 1.0 ? sqrt(2.0 * portable_log(total)) : 0.0;
}

NCCLBOT_HD inline int lower_confidence_argmin(const ArmStats& stats, const double* inv_sqrt_count,
                                              double scale) {
  const int k = stats.arms.k;
  double index[kNumArms];
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

// select() of a UCB policy that computes its own exploration term (SW-UCB, D-UCB): an unobserved
// arm first (lowest slot), else the lower-confidence argmin at c * m* * sqrt(2 ln t).
NCCLBOT_HD inline int confidence_bound_select(const ArmStats& stats, const double* inv_sqrt_count, double c) {
  const int k = stats.arms.k;
  if (k == 0) return -1;
  if (stats.untried > 0) return stats.arms.slot[stats.first_untried()];
  const double scale = c * min_of(stats.mean, k) * exploration_bonus(stats.total);
  return stats.arms.slot[lower_confidence_argmin(stats, inv_sqrt_count, scale)];
}

}  // namespace ncclbot
