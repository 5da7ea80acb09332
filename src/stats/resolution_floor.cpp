#include "ncclbot/stats/resolution_floor.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

namespace ncclbot {

double smallest_sign_flip_p(long nonzero_units, Alternative alternative) {
  if (nonzero_units < 0) throw std::invalid_argument("number of units must be >= 0");
  // ldexp is exact down to the smallest subnormal and 0 below it; no intermediate 2^n is formed.
  const double one_sided = std::ldexp(1.0, -int(std::min<long>(nonzero_units, INT_MAX)));
  return alternative == Alternative::two_sided ? std::min(1.0, 2.0 * one_sided) : one_sided;
}

double smallest_permutation_p(long nonzero_units, Alternative alternative, PermutationMethod method,
                              uint64_t resamples) {
  const double exact = smallest_sign_flip_p(nonzero_units, alternative);
  if (nonzero_units == 0 || sign_flip_enumerates(uint64_t(nonzero_units), method, resamples)) return exact;
  if (resamples == 0) throw std::invalid_argument("a Monte Carlo test needs resamples >= 1");
  const double draws = double(resamples) + 1.0;
  const double monte_carlo = alternative == Alternative::two_sided ? std::min(1.0, 2.0 / draws) : 1.0 / draws;
  return std::max(exact, monte_carlo);
}

long holm_max_family_with_rejection(double p_floor, double alpha) {
  if (!(p_floor >= 0.0) || !(alpha >= 0.0)) throw std::invalid_argument("need p_floor >= 0 and alpha >= 0");
  if (p_floor > alpha) return 0;
  if (p_floor == 0.0) return kHolmUnlimitedFamily;
  if (std::log(alpha) - std::log(p_floor) > std::log(double(kHolmUnlimitedFamily)))
    return kHolmUnlimitedFamily;
  const double ratio = alpha / p_floor;
  // Beyond 2^52 doubles no longer tell m from m + 1, so the product check below cannot refine it.
  if (ratio > 0x1p52) return long(std::floor(ratio));
  // Start near alpha / p_floor and settle the rounding with the exact product Holm uses.
  long m = long(std::floor(ratio));
  while (m > 0 && !(double(m) * p_floor <= alpha)) --m;
  while (double(m + 1) * p_floor <= alpha) ++m;
  return m;
}

long holm_max_rejections(double p_floor, double alpha, long family_size) {
  if (family_size < 0) throw std::invalid_argument("family size must be >= 0");
  return family_size <= holm_max_family_with_rejection(p_floor, alpha) ? family_size : 0;
}

}  // namespace ncclbot
