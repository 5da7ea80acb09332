#pragma once
// The lower-confidence-bound argmin shared by UCB1 and SW-UCB: the first packed arm j (ties: lowest
// slot) minimising  mean_j - scale * inv_sqrt_count_j. One pass computes every index and their
// minimum in four independent chains (min is exact, so the grouping does not change the value),
// then a short scan finds the first arm at that minimum. Same result as filling an index array and
// calling first_index_of_min(), with one pass less over the arms.
#include <cmath>

#include "ncclbot/policy/arm_stats.hpp"

namespace ncclbot {

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

}  // namespace ncclbot
