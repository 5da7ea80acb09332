#include "ncclbot/stats/bootstrap.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <utility>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/stats/bca.hpp"
#include "ncclbot/stats/loss_summary.hpp"
#include "ncclbot/stats/resample_p99.hpp"
#include "ncclbot/stats/resample_stream.hpp"
#include "resample_means_x4.hpp"

namespace ncclbot {

IntervalMethod parse_interval_method(std::string_view text) {
  if (text == "percentile") return IntervalMethod::percentile;
  if (text == "bca" || text == "BCa") return IntervalMethod::bca;
  throw UsageError("method must be \"percentile\" or \"bca\", not \"" + std::string(text) + "\"");
}

std::string to_string(IntervalMethod m) {
  return m == IntervalMethod::bca ? "bca" : "percentile";
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One array of per-unit values with what the resampling loops need precomputed.
struct UnitValues {
  std::span<const double> x;
  std::vector<double> sorted;         // x ascending
  std::vector<uint32_t> unit_at;      // unit at each sorted position (stable)
  std::vector<uint32_t> position_of;  // sorted position of each unit
  std::vector<uint8_t> above;         // x_u > threshold

  UnitValues(std::span<const double> values, double threshold) : x(values) {
    const size_t n = x.size();
    unit_at.resize(n);
    std::iota(unit_at.begin(), unit_at.end(), 0u);
    std::stable_sort(unit_at.begin(), unit_at.end(), [&](uint32_t a, uint32_t b) { return x[a] < x[b]; });
    sorted.resize(n);
    position_of.resize(n);
    above.resize(n);
    for (size_t r = 0; r < n; ++r) {
      sorted[r] = x[unit_at[r]];
      position_of[unit_at[r]] = uint32_t(r);
    }
    for (size_t u = 0; u < n; ++u) above[u] = loss_above(x[u], threshold);
  }
};

RankedValues ranked(const UnitValues& v) {
  return {v.sorted, v.position_of};
}

// The streams of resamples b, b + 1, ..., b + R - 1.
template <size_t... I>
std::array<ResampleStream, sizeof...(I)> streams_from(uint64_t seed, uint64_t b, std::index_sequence<I...>) {
  return {ResampleStream(seed, b + I, ResamplePurpose::bootstrap_indices)...};
}

// Means of R consecutive resamples b, b+1, ... (of x and, when Paired, of y at the same draws).
// Draw i of a resample goes to partial sum i mod 4 and the sums are combined as
// ((s0 + s1) + (s2 + s3)) / n: the order replay_aggregate.hpp reproduces on the device. Stepping R
// independent resamples side by side only interleaves their work; each value is the same for any R.
template <int R, bool Paired>
void resample_means(std::span<const double> x, std::span<const double> y, uint64_t seed, uint64_t b,
                    double* tx, double* ty) {
  const uint32_t n = uint32_t(x.size());
  auto stream = streams_from(seed, b, std::make_index_sequence<R>{});
  double sx[R][4] = {}, sy[R][4] = {};
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int r = 0; r < R; ++r) {
      uint32_t u[4];
      stream[r].next4_below(n, u);
      for (int l = 0; l < 4; ++l) {
        sx[r][l] += x[u[l]];
        if (Paired) sy[r][l] += y[u[l]];
      }
    }
  for (; i < n; ++i)
    for (int r = 0; r < R; ++r) {
      const uint32_t u = stream[r].next_below(n);
      sx[r][i & 3] += x[u];
      if (Paired) sy[r][i & 3] += y[u];
    }
  for (int r = 0; r < R; ++r) {
    tx[r] = ((sx[r][0] + sx[r][1]) + (sx[r][2] + sx[r][3])) / double(n);
    ty[r] = ((sy[r][0] + sy[r][1]) + (sy[r][2] + sy[r][3])) / double(n);
  }
}

// Resamples [begin, end) of the means of x and, when paired, of y at the same draws into
// tx[b - first] and ty[b - first]: four at a time in SIMD lanes where the CPU has them (a group
// with a possibly rejected draw is redone in scalar code), then two at a time, then one.
void resample_mean_pair_range(std::span<const double> x, std::span<const double> y, bool paired,
                              uint64_t seed, uint64_t first, uint64_t begin, uint64_t end, double* tx_out,
                              double* ty_out) {
  const auto put = [&](uint64_t b, int count, const double* tx, const double* ty) {
    for (int r = 0; r < count; ++r) {
      tx_out[b - first + uint64_t(r)] = tx[r];
      if (paired) ty_out[b - first + uint64_t(r)] = ty[r];
    }
  };
  const auto scalar = [&](uint64_t b, int count) {
    double tx[2], ty[2];
    if (count == 2)
      paired ? resample_means<2, true>(x, y, seed, b, tx, ty)
             : resample_means<2, false>(x, y, seed, b, tx, ty);
    else
      paired ? resample_means<1, true>(x, y, seed, b, tx, ty)
             : resample_means<1, false>(x, y, seed, b, tx, ty);
    put(b, count, tx, ty);
  };
  const SimdLevel simd = simd_level();
  uint64_t b = begin;
  if (simd != SimdLevel::none && x.size() >= 4)
    for (; b + 4 <= end; b += 4) {
      double tx[4], ty[4];
      if (resample_means_x4(simd, x, paired ? y : std::span<const double>(), seed, b, tx, ty)) {
        put(b, 4, tx, ty);
      } else {
        scalar(b, 2);
        scalar(b + 2, 2);
      }
    }
  for (; b + 2 <= end; b += 2) scalar(b, 2);
  if (b < end) scalar(b, 1);
}

// Resamples [begin, end) of the mean (paired: the difference of the means) into theta[b - first].
void resample_mean_range(std::span<const double> x, std::span<const double> y, bool paired, uint64_t seed,
                         uint64_t first, uint64_t begin, uint64_t end, double* theta) {
  if (!paired) {
    resample_mean_pair_range(x, y, false, seed, first, begin, end, theta, nullptr);
    return;
  }
  std::vector<double> ty(end - begin);
  resample_mean_pair_range(x, y, true, seed, begin, begin, end, theta + (begin - first), ty.data());
  for (uint64_t b = begin; b < end; ++b) theta[b - first] -= ty[b - begin];
}

// Statistic of the data with unit i left out, for every i (closed forms; see the header).
std::vector<double> jackknife(BootstrapStatistic stat, const UnitValues& v, double threshold) {
  const size_t n = v.x.size();
  std::vector<double> out(n);
  switch (stat) {
    case BootstrapStatistic::mean: {
      double sum = 0.0;
      for (double t : v.x) sum += t;
      for (size_t i = 0; i < n; ++i) out[i] = (sum - v.x[i]) / double(n - 1);
      break;
    }
    case BootstrapStatistic::max:
      for (size_t i = 0; i < n; ++i) out[i] = v.position_of[i] == n - 1 ? v.sorted[n - 2] : v.sorted[n - 1];
      break;
    case BootstrapStatistic::count_above: {
      double count = 0.0;
      for (size_t i = 0; i < n; ++i) count += loss_above(v.x[i], threshold);
      for (size_t i = 0; i < n; ++i) out[i] = count - double(v.above[i]);
      break;
    }
    case BootstrapStatistic::p99: {
      const PercentileSpot spot(n - 1);
      for (size_t i = 0; i < n; ++i) {
        // Ascending rank k of the leave-one-out sample is sorted[k] below the removed position, sorted[k+1]
        // above.
        const size_t r = v.position_of[i];
        const double at_lo = v.sorted[spot.lo < r ? spot.lo : spot.lo + 1];
        const double at_hi = v.sorted[spot.hi < r ? spot.hi : spot.hi + 1];
        out[i] = spot.interpolate(at_lo, at_hi);
      }
      break;
    }
  }
  return out;
}

void check_values(std::span<const double> v, const char* name) {
  if (v.empty()) throw std::invalid_argument(std::string(name) + " is empty");
  if (v.size() >= (size_t(1) << 32)) throw std::invalid_argument(std::string(name) + " has too many values");
  for (double t : v)
    if (!std::isfinite(t)) throw std::invalid_argument(std::string(name) + " holds a non-finite value");
}

void check_inputs(std::span<const double> x, std::span<const double> y, bool paired,
                  const BootstrapOptions& opt) {
  check_values(x, "x");
  if (paired) {
    check_values(y, "y");
    if (x.size() != y.size())
      throw std::invalid_argument("paired bootstrap needs x and y of the same length");
  }
  if (opt.resamples == 0) throw std::invalid_argument("resamples must be >= 1");
  if (!(opt.level > 0.0 && opt.level < 1.0)) throw std::invalid_argument("level must lie in (0, 1)");
  if (opt.method == IntervalMethod::bca && x.size() < 2)
    throw std::invalid_argument("BCa needs at least 2 values");
}

// The sorted per-unit views that the resampling loops of every statistic but the mean, and the BCa
// jackknife, read: built once per call, and only when one of those runs (the mean's percentile
// interval needs neither, and sorting 10^4 values is a visible share of its time).
struct UnitViews {
  std::optional<UnitValues> x, y;  // y is empty (no units) unless paired

  UnitViews(std::span<const double> xs, std::span<const double> ys, bool paired, const BootstrapOptions& opt,
            bool with_interval) {
    if (opt.statistic == BootstrapStatistic::mean && !(with_interval && opt.method == IntervalMethod::bca))
      return;
    x.emplace(xs, opt.threshold);
    y.emplace(paired ? ys : std::span<const double>(), opt.threshold);
  }
};

// theta*_b for b in [first, first + count), into theta[b - first].
std::vector<double> distribution(std::span<const double> x, std::span<const double> y, bool paired,
                                 const BootstrapOptions& opt, const UnitViews& views, uint64_t first,
                                 uint64_t count) {
  const size_t n = x.size();
  const BootstrapStatistic stat = opt.statistic;
  std::vector<double> theta(count);
  if (stat == BootstrapStatistic::mean) {
    parallel_for_chunks(count, opt.threads, [&](uint64_t begin, uint64_t end) {
      resample_mean_range(x, y, paired, opt.seed, first, first + begin, first + end, theta.data());
    });
    return theta;
  }
  const UnitValues& vx = *views.x;
  const UnitValues& vy = *views.y;
  if (stat == BootstrapStatistic::p99) {
    const ResampleP99 p99(ranked(vx), paired ? std::optional<RankedValues>(ranked(vy)) : std::nullopt);
    parallel_for_chunks(count, opt.threads, [&](uint64_t begin, uint64_t end) {
      p99.run(opt.seed, first + begin, end - begin, theta.data() + begin);
    });
    return theta;
  }
  const uint32_t n32 = uint32_t(n);
  parallel_for_chunks(count, opt.threads, [&](uint64_t begin, uint64_t end) {
    for (uint64_t k = begin; k < end; ++k) {
      ResampleStream stream(opt.seed, first + k, ResamplePurpose::bootstrap_indices);
      double tx = 0.0, ty = 0.0;
      if (stat == BootstrapStatistic::max) {
        double mx = -std::numeric_limits<double>::infinity(), my = mx;
        for (uint32_t i = 0; i < n32; ++i) {
          const uint32_t u = stream.next_below(n32);
          mx = std::max(mx, x[u]);
          if (paired) my = std::max(my, y[u]);
        }
        tx = mx;
        ty = my;
      } else {  // count_above
        uint32_t cx = 0, cy = 0;
        for (uint32_t i = 0; i < n32; ++i) {
          const uint32_t u = stream.next_below(n32);
          cx += vx.above[u];
          if (paired) cy += vy.above[u];
        }
        tx = double(cx);
        ty = double(cy);
      }
      theta[k] = paired ? tx - ty : tx;
    }
  });
  return theta;
}

// The interval from the whole distribution theta (all opt.resamples of it, in resample order).
BootstrapResult interval(std::span<const double> x, std::span<const double> y, bool paired,
                         const UnitViews& views, std::vector<double> theta, const BootstrapOptions& opt) {
  const size_t n = x.size();
  const BootstrapStatistic stat = opt.statistic;
  BootstrapResult res;
  res.estimate = evaluate_statistic(stat, x, opt.threshold) -
                 (paired ? evaluate_statistic(stat, y, opt.threshold) : 0.0);
  std::vector<double> sorted = theta;
  std::sort(sorted.begin(), sorted.end());
  res.standard_error = bootstrap_standard_error(theta);

  const double alpha = (1.0 - opt.level) / 2.0;
  if (opt.method == IntervalMethod::percentile) {
    res.level_low = alpha;
    res.level_high = 1.0 - alpha;
    res.bias_correction = res.acceleration = kNaN;
  } else {
    res.bias_correction = bca_bias_correction(sorted, res.estimate);
    std::vector<double> jack = jackknife(stat, *views.x, opt.threshold);
    if (paired) {
      const std::vector<double> jy = jackknife(stat, *views.y, opt.threshold);
      for (size_t i = 0; i < n; ++i) jack[i] -= jy[i];
    }
    res.acceleration = jackknife_acceleration(jack);
    const BcaLevels levels = bca_levels(res.bias_correction, res.acceleration, alpha);
    res.level_low = levels.low;
    res.level_high = levels.high;
  }
  if (std::isnan(res.level_low) || std::isnan(res.level_high)) {
    res.degenerate = true;
    res.low = res.high = kNaN;
  } else {
    res.low = quantile_linear_sorted(sorted, res.level_low);
    res.high = quantile_linear_sorted(sorted, res.level_high);
  }
  if (opt.keep_distribution) res.distribution = std::move(theta);
  return res;
}

}  // namespace

BootstrapResult bootstrap_interval(std::span<const double> x, const BootstrapOptions& options) {
  check_inputs(x, {}, false, options);
  const UnitViews views(x, {}, false, options, true);
  return interval(x, {}, false, views, distribution(x, {}, false, options, views, 0, options.resamples),
                  options);
}

BootstrapResult bootstrap_paired_difference(std::span<const double> x, std::span<const double> y,
                                            const BootstrapOptions& options) {
  check_inputs(x, y, true, options);
  const UnitViews views(x, y, true, options, true);
  return interval(x, y, true, views, distribution(x, y, true, options, views, 0, options.resamples), options);
}

double bootstrap_standard_error(std::span<const double> theta) {
  const double B = double(theta.size());
  double mean = 0.0;
  for (double t : theta) mean += t;
  mean /= B;
  double ss = 0.0;
  for (double t : theta) ss += (t - mean) * (t - mean);
  return theta.size() > 1 ? std::sqrt(ss / (B - 1.0)) : kNaN;
}

std::vector<double> bootstrap_distribution(std::span<const double> x, const BootstrapOptions& options,
                                           uint64_t first, uint64_t count) {
  check_inputs(x, {}, false, options);
  return distribution(x, {}, false, options, UnitViews(x, {}, false, options, false), first, count);
}

std::vector<double> bootstrap_column_means(std::span<const double> columns, size_t k, uint64_t seed,
                                           uint64_t first, uint64_t count, unsigned threads) {
  if (k == 0 || columns.empty() || columns.size() % k != 0)
    throw std::invalid_argument("bootstrap_column_means: no columns, or columns of unequal length");
  const size_t n = columns.size() / k;
  check_values(columns, "columns");
  if (n >= (size_t(1) << 32)) throw std::invalid_argument("columns have too many values");
  std::vector<double> out(count * k);
  parallel_for_chunks(count, threads, [&](uint64_t begin, uint64_t end) {
    std::vector<double> tx(end - begin), ty(end - begin);
    for (size_t c = 0; c < k; c += 2) {
      const bool paired = c + 1 < k;
      const std::span<const double> x = columns.subspan(c * n, n);
      const std::span<const double> y = paired ? columns.subspan((c + 1) * n, n) : std::span<const double>();
      resample_mean_pair_range(x, y, paired, seed, first + begin, first + begin, first + end, tx.data(),
                               ty.data());
      for (uint64_t b = begin; b < end; ++b) {
        out[b * k + c] = tx[b - begin];
        if (paired) out[b * k + c + 1] = ty[b - begin];
      }
    }
  });
  return out;
}

}  // namespace ncclbot
