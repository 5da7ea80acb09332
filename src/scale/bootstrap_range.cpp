#include "ncclbot/scale/bootstrap_range.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "ncclbot/stats/parallel_for.hpp"
#include "ncclbot/stats/resample_stream.hpp"

namespace ncclbot {
namespace {

// The p99 of a resample from how often each unit was drawn: the sorted order walked from the top
// until the two ranks NumPy's "linear" p99 interpolates between are found (as bootstrap.cpp).
struct TopWalk {
  std::vector<double> sorted;     // x ascending
  std::vector<uint32_t> unit_at;  // unit at each sorted position (ties in unit order)
  size_t lo = 0, hi = 0;
  double frac = 0;

  explicit TopWalk(std::span<const double> x) : sorted(x.size()), unit_at(x.size()) {
    std::iota(unit_at.begin(), unit_at.end(), 0u);
    std::stable_sort(unit_at.begin(), unit_at.end(), [&](uint32_t a, uint32_t b) { return x[a] < x[b]; });
    for (size_t r = 0; r < x.size(); ++r) sorted[r] = x[unit_at[r]];
    const double pos = 0.99 * double(x.size() - 1);
    lo = size_t(std::floor(pos));
    hi = std::min(lo + 1, x.size() - 1);
    frac = pos - double(lo);
  }

  double p99(const uint32_t* draws) const {
    const size_t n = sorted.size(), want_hi = n - 1 - hi, want_lo = n - 1 - lo;
    double at_hi = std::numeric_limits<double>::quiet_NaN(), at_lo = at_hi;
    size_t seen = 0;
    for (size_t r = n; r-- > 0;) {
      const uint32_t c = draws[unit_at[r]];
      if (c == 0) continue;
      seen += c;
      if (std::isnan(at_hi) && seen > want_hi) at_hi = sorted[r];
      if (seen > want_lo) {
        at_lo = sorted[r];
        break;
      }
    }
    return at_lo + (at_hi - at_lo) * frac;
  }
};

double resample_statistic(std::span<const double> x, const BootstrapOptions& o, uint64_t b,
                          const TopWalk* walk, std::vector<uint32_t>& draws) {
  ResampleStream stream(o.seed, b, ResamplePurpose::bootstrap_indices);
  const uint32_t n = uint32_t(x.size());
  switch (o.statistic) {
    case BootstrapStatistic::mean: {
      double s[4] = {0, 0, 0, 0};  // draw i into partial sum i mod 4, as bootstrap.cpp
      for (uint32_t i = 0; i < n; ++i) s[i & 3] += x[stream.next_below(n)];
      return ((s[0] + s[1]) + (s[2] + s[3])) / double(n);
    }
    case BootstrapStatistic::max: {
      double m = -std::numeric_limits<double>::infinity();
      for (uint32_t i = 0; i < n; ++i) m = std::max(m, x[stream.next_below(n)]);
      return m;
    }
    case BootstrapStatistic::count_above: {
      uint32_t c = 0;
      for (uint32_t i = 0; i < n; ++i) c += x[stream.next_below(n)] > o.threshold;
      return double(c);
    }
    case BootstrapStatistic::p99:
      std::fill(draws.begin(), draws.end(), 0u);
      for (uint32_t i = 0; i < n; ++i) ++draws[stream.next_below(n)];
      return walk->p99(draws.data());
  }
  return 0;
}

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
  const bool p99 = o.statistic == BootstrapStatistic::p99;
  const std::optional<TopWalk> walk = p99 ? std::optional<TopWalk>(TopWalk(x)) : std::nullopt;
  std::vector<double> theta(count);
  parallel_for_chunks(count, o.threads, [&](uint64_t begin, uint64_t end) {
    std::vector<uint32_t> draws(p99 ? x.size() : 0);
    for (uint64_t k = begin; k < end; ++k)
      theta[k] = resample_statistic(x, o, first + k, walk ? &*walk : nullptr, draws);
  });
  return theta;
}

BootstrapResult percentile_interval_from_distribution(std::span<const double> x, std::vector<double> theta,
                                                      const BootstrapOptions& o) {
  BootstrapResult r;
  r.estimate = evaluate_statistic(o.statistic, x, o.threshold);
  const double B = double(theta.size());
  double mean = 0.0;
  for (double t : theta) mean += t;
  mean /= B;
  double ss = 0.0;
  for (double t : theta) ss += (t - mean) * (t - mean);
  r.standard_error = theta.size() > 1 ? std::sqrt(ss / (B - 1.0)) : std::numeric_limits<double>::quiet_NaN();
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
