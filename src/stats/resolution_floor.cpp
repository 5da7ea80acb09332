#include "ncclbot/stats/resolution_floor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ncclbot {

double smallest_sign_flip_p(long nonzero_units, Alternative alternative) {
  if (nonzero_units < 0) throw std::invalid_argument("number of units must be >= 0");
  const double one_sided = std::ldexp(1.0, -int(std::min<long>(nonzero_units, 2000)));
  return alternative == Alternative::two_sided ? std::min(1.0, 2.0 * one_sided) : one_sided;
}

long holm_max_family_with_rejection(double p_floor, double alpha) {
  if (!(p_floor > 0.0) || !(alpha >= 0.0)) throw std::invalid_argument("need p_floor > 0 and alpha >= 0");
  if (p_floor > alpha) return 0;
  // Start near alpha / p_floor and settle the rounding with the exact product Holm uses.
  long m = long(std::floor(alpha / p_floor));
  while (m > 0 && !(double(m) * p_floor <= alpha)) --m;
  while (double(m + 1) * p_floor <= alpha) ++m;
  return m;
}

long holm_max_rejections(double p_floor, double alpha, long family_size) {
  if (family_size < 0) throw std::invalid_argument("family size must be >= 0");
  return family_size <= holm_max_family_with_rejection(p_floor, alpha) ? family_size : 0;
}

}  // namespace ncclbot
