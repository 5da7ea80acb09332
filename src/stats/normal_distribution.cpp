#include "ncclbot/stats/normal_distribution.hpp"

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>

namespace ncclbot {
namespace {
const boost::math::normal_distribution<double> kStandardNormal(0.0, 1.0);
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

double normal_cdf(double z) {
  if (std::isnan(z)) return z;
  if (std::isinf(z)) return z > 0 ? 1.0 : 0.0;
  return boost::math::cdf(kStandardNormal, z);
}

double normal_sf(double z) {
  if (std::isnan(z)) return z;
  if (std::isinf(z)) return z > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(kStandardNormal, z));
}

double normal_quantile_ieee(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  return boost::math::quantile(kStandardNormal, p);
}

}  // namespace ncclbot
