#pragma once
// Bootstrap confidence intervals of a metric over contexts (units), one sample or the paired
// difference statistic(x) - statistic(y) of two policies scored on the same contexts (the same
// resampled contexts feed both, as scipy.stats.bootstrap(paired=True) does).
//
// Resample b draws n units with replacement from its own Philox stream (seed, b) (see
// resample_stream.hpp), so results are bit-identical for any thread count. Units are drawn as
// indices; values are never copied: the mean, max and count are accumulated while drawing, and the
// p99 keeps only the draws of units ranked near the top and walks their counts down the sorted
// order (resample_p99.hpp).
// Intervals follow scipy.stats.bootstrap: "percentile" takes the (1-level)/2 and (1+level)/2
// quantiles (linear interpolation) of the bootstrap distribution; "bca" moves those levels by the
// bias correction and the jackknife acceleration (bca.hpp). The jackknife uses closed forms
// (leave-one-out mean, order statistics), O(n) instead of O(n^2).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/stats/bootstrap_statistic.hpp"

namespace ncclbot {

enum class IntervalMethod { percentile, bca };

IntervalMethod parse_interval_method(std::string_view text);  // "percentile" | "bca" (UsageError otherwise)
std::string to_string(IntervalMethod m);

struct BootstrapOptions {
  BootstrapStatistic statistic = BootstrapStatistic::mean;
  double threshold = 0.10;  // count_above: values above it count (loss_above, loss_threshold.hpp)
  double level = 0.95;      // two-sided confidence level, in (0, 1)
  IntervalMethod method = IntervalMethod::bca;
  uint64_t resamples = 9999;
  uint64_t seed = 0;
  unsigned threads = 1;  // 0 = all cores; the result does not depend on it
  bool keep_distribution = false;
};

struct BootstrapResult {
  double estimate = 0.0;  // the statistic on the data (paired: statistic(x) - statistic(y))
  double low = 0.0, high = 0.0;
  double level_low = 0.0, level_high = 0.0;  // quantile levels used (BCa-adjusted for "bca")
  double standard_error = 0.0;               // sample standard deviation of the bootstrap distribution
  double bias_correction = 0.0;              // z0 (bca only, else NaN)
  double acceleration = 0.0;                 // a (bca only, else NaN)
  bool degenerate = false;                   // BCa undefined (e.g. all resamples equal): low, high are NaN
  std::vector<double> distribution;          // theta*_b in resample order, if keep_distribution
};

// Throws std::invalid_argument for empty or non-finite data, resamples == 0, a level outside (0,1),
// BCa with fewer than 2 units, or x and y of different lengths.
BootstrapResult bootstrap_interval(std::span<const double> x, const BootstrapOptions& options);
BootstrapResult bootstrap_paired_difference(std::span<const double> x, std::span<const double> y,
                                            const BootstrapOptions& options);

// theta*_b for b in [first, first + count) of bootstrap_interval(x, options)'s distribution, bit
// for bit (each resample has its own stream): pieces of any split of [0, resamples), concatenated,
// are that distribution, so the resamples can be spread over processes. Same checks as above.
// The bootstrap standard error: the sample standard deviation (B - 1 in the denominator) of the
// distribution theta in resample order; NaN for fewer than 2 resamples.
double bootstrap_standard_error(std::span<const double> theta);

std::vector<double> bootstrap_distribution(std::span<const double> x, const BootstrapOptions& options,
                                           uint64_t first, uint64_t count);

// The means of k columns over resamples [first, first + count), every column drawn with the same
// indices: resample b draws n units from the stream (seed, b) as bootstrap_interval() does, so
// out[(b - first) * k + c] is bit for bit the b-th value of column c's bootstrap_distribution() for
// the mean (the block bootstrap of ope/ sums blocks' statistics this way). `columns` holds the k
// columns of n values one after another. Any thread count gives the same numbers. Throws
// std::invalid_argument for no columns, columns of unequal length or a non-finite value.
std::vector<double> bootstrap_column_means(std::span<const double> columns, size_t k, uint64_t seed,
                                           uint64_t first, uint64_t count, unsigned threads);

}  // namespace ncclbot
