#include "ncclbot/stats/mcnemar.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <stdexcept>

namespace ncclbot {

McNemarResult mcnemar_exact(int64_t b, int64_t c) {
  if (b < 0 || c < 0) throw std::invalid_argument("McNemar counts must be >= 0");
  McNemarResult r;
  r.statistic = std::min(b, c);
  const int64_t n = b + c;
  if (n == 0 || r.statistic * 2 == n) return r;  // P(X <= n/2) >= 1/2: the doubled tail caps at 1
  const boost::math::binomial_distribution<double> dist(double(n), 0.5);
  r.p_value = std::min(1.0, 2.0 * boost::math::cdf(dist, double(r.statistic)));
  return r;
}

}  // namespace ncclbot
