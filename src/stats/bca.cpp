#include "ncclbot/stats/bca.hpp"

#include <algorithm>
#include <cmath>

#include "ncclbot/stats/normal_distribution.hpp"

namespace ncclbot {

double bca_bias_correction(std::span<const double> theta_sorted, double estimate) {
  const auto below =
      std::lower_bound(theta_sorted.begin(), theta_sorted.end(), estimate) - theta_sorted.begin();
  const auto at_or_below =
      std::upper_bound(theta_sorted.begin(), theta_sorted.end(), estimate) - theta_sorted.begin();
  return normal_quantile_ieee(double(below + at_or_below) / (2.0 * double(theta_sorted.size())));
}

double jackknife_acceleration(std::span<const double> theta) {
  const double n = double(theta.size());
  double mean = 0.0;
  for (double t : theta) mean += t;
  mean /= n;
  double num = 0.0, den = 0.0;
  for (double t : theta) {
    const double u = (n - 1.0) * (mean - t);
    num += u * u * u;
    den += u * u;
  }
  num /= n * n * n;
  den /= n * n;
  return 1.0 / 6.0 * num / std::pow(den, 1.5);  // 0/0 = NaN for a constant jackknife, as in SciPy
}

BcaLevels bca_levels(double z0, double a, double alpha) {
  const double z_alpha = normal_quantile_ieee(alpha);
  const double num1 = z0 + z_alpha;
  const double num2 = z0 - z_alpha;
  return {normal_cdf(z0 + num1 / (1.0 - a * num1)), normal_cdf(z0 + num2 / (1.0 - a * num2))};
}

}  // namespace ncclbot
