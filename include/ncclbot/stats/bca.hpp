#pragma once
// Bias-corrected and accelerated (BCa) bootstrap levels (Efron & Tibshirani 1993, 14.3), computed
// the way scipy.stats.bootstrap does (scipy/stats/_resampling.py, _bca_interval):
//   z0 = Phi^-1((#{theta*_b < theta} + #{theta*_b <= theta}) / (2B))   (ties count half)
//   a  = sum U_i^3 / n^3 / (6 (sum U_i^2 / n^2)^(3/2)),  U_i = (n-1)(mean_j theta_(j) - theta_(i))
//   level_low  = Phi(z0 + (z0 + z_a) / (1 - a (z0 + z_a))),  z_a = Phi^-1(alpha), alpha = (1-level)/2
//   level_high = the same with z_(1-alpha).
// The interval is then the linear-interpolation quantiles of theta* at those levels.
#include <span>

namespace ncclbot {

// theta_sorted: the bootstrap distribution sorted ascending.
double bca_bias_correction(std::span<const double> theta_sorted, double estimate);

// theta_jackknife[i]: the statistic with unit i left out. NaN when all are equal (no acceleration defined).
double jackknife_acceleration(std::span<const double> theta_jackknife);

struct BcaLevels {
  double low, high;  // quantile levels in [0,1]; NaN when z0 or a is not finite (degenerate data)
};

BcaLevels bca_levels(double z0, double acceleration, double alpha);

}  // namespace ncclbot
