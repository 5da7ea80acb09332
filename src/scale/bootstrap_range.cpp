#include "ncclbot/scale/bootstrap_range.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
namespace ncclbot {
namespace {

// quantile_linear_sorted(theta sorted, p) without sorting theta: the two order statistics it
// interpolates between are selected, O(B) instead of O(B log B). Same arithmetic as
// stats/loss_summary.cpp, so the same bits. Reorders v.
double quantile_by_selection(std::vector<double>& v, double p) {
  const double pos = p * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos)), hi = std::min(lo + 1, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(lo), v.end());
  const double at_lo = v[lo];
  // Everything after position lo is >= v[lo] now: the next order statistic is their minimum.
  const double at_hi = hi == lo ? at_lo : *std::min_element(v.begin() + std::ptrdiff_t(lo) + 1, v.end());
  return at_lo + (at_hi - at_lo) * (pos - double(lo));
}

}  // namespace

std::vector<double> bootstrap_distribution_range(std::span<const double> x, const BootstrapOptions& o,
                                                 uint64_t first, uint64_t count) {
  return bootstrap_distribution(x, o, first, count);
}

bool percentile_interval_computable_elsewhere(std::span<const double> x, const BootstrapOptions& o) {
  if (o.method != IntervalMethod::percentile || x.empty() || o.resamples == 0) return false;
  if (!(o.level > 0.0 && o.level < 1.0) || x.size() >= (size_t(1) << 32)) return false;
  for (double t : x)
    if (!std::isfinite(t)) return false;
  return true;
}

BootstrapResult percentile_interval_from_distribution(std::span<const double> x, std::vector<double> theta,
                                                      const BootstrapOptions& o) {
  BootstrapResult r;
  r.estimate = evaluate_statistic(o.statistic, x, o.threshold);
  r.standard_error = bootstrap_standard_error(theta);
  r.bias_correction = r.acceleration = std::numeric_limits<double>::quiet_NaN();
  r.level_low = (1.0 - o.level) / 2.0;
  r.level_high = 1.0 - r.level_low;
  if (o.keep_distribution) r.distribution = theta;
  // Rank 0 does this alone after every interval's pieces arrive, so it must be cheap.
  r.low = quantile_by_selection(theta, r.level_low);
  r.high = quantile_by_selection(theta, r.level_high);
  return r;
}

}  // namespace ncclbot
