// The study's statistics, each a direct call into the statistics library with the same options the
// matching `ncclbot stats` subcommand takes, so results.json can be checked number for number.
#include "study/study_statistics.hpp"

#include <algorithm>
#include <limits>

#include "ncclbot/stats/loss_summary.hpp"
#include "ncclbot/stats/loss_threshold.hpp"
#include "ncclbot/stats/mcnemar.hpp"
#include "ncclbot/stats/multiple_testing.hpp"
#include "ncclbot/stats/resolution_floor.hpp"
#include "ncclbot/stats/sign_flip_test.hpp"

namespace ncclbot::study {
namespace {

BootstrapStatistic library_statistic(Statistic st) {
  switch (st) {
    case Statistic::kMean:
      return BootstrapStatistic::mean;
    case Statistic::kP99:
      return BootstrapStatistic::p99;
    case Statistic::kMax:
      return BootstrapStatistic::max;
    case Statistic::kAbove10pct:
      return BootstrapStatistic::count_above;
  }
  return BootstrapStatistic::mean;
}

IntervalBootstrap& interval_bootstrap() {
  static IntervalBootstrap installed;
  return installed;
}

}  // namespace

void set_interval_bootstrap(IntervalBootstrap bootstrap) {
  interval_bootstrap() = std::move(bootstrap);
}

bool interval_bootstrap_installed() {
  return bool(interval_bootstrap());
}

double metric_value(std::span<const double> losses, Metric m) {
  return objective_value(summarize_losses(losses), m);
}

const char* statistic_name(Statistic s) {
  switch (s) {
    case Statistic::kMean:
      return "mean";
    case Statistic::kP99:
      return "p99";
    case Statistic::kMax:
      return "max";
    case Statistic::kAbove10pct:
      return "count_above";
  }
  return "mean";
}

Interval bootstrap_interval(std::span<const double> losses, Statistic st, double level, int resamples,
                            uint64_t seed) {
  BootstrapOptions o;
  o.statistic = library_statistic(st);
  o.threshold = kLossThreshold;
  o.level = level;
  // Percentile, not BCa: with heavy-tailed losses and statistics like the max, BCa's acceleration is
  // unstable and often undefined; the percentile interval is the one a reader can always recompute.
  o.method = IntervalMethod::percentile;
  o.resamples = uint64_t(resamples);
  o.seed = seed;
  o.threads = 0;  // results do not depend on the thread count
  const BootstrapResult r =
      interval_bootstrap() ? interval_bootstrap()(losses, o) : ncclbot::bootstrap_interval(losses, o);
  return {r.estimate, r.low, r.high};
}

Interval paired_difference_interval(std::span<const double> b, std::span<const double> a, Statistic st,
                                    double level, int resamples, uint64_t seed) {
  BootstrapOptions o;
  o.statistic = library_statistic(st);
  o.threshold = kLossThreshold;
  o.level = level;
  o.method = IntervalMethod::percentile;  // as bootstrap_interval(), for the same reason
  o.resamples = uint64_t(resamples);
  o.seed = seed;
  o.threads = 0;
  const BootstrapResult r = bootstrap_paired_difference(b, a, o);
  return {r.estimate, r.low, r.high};
}

Interval paired_ratio_above_interval(std::span<const double> b, std::span<const double> a, double level,
                                     int resamples, uint64_t seed) {
  const size_t n = b.size();
  std::vector<double> columns(2 * n);
  for (size_t i = 0; i < n; ++i) {
    columns[i] = loss_above(b[i], kLossThreshold) ? 1.0 : 0.0;
    columns[n + i] = loss_above(a[i], kLossThreshold) ? 1.0 : 0.0;
  }
  const auto ratio = [](double above_b, double above_a) {
    if (above_a > 0.0) return above_b / above_a;
    return above_b > 0.0 ? std::numeric_limits<double>::max() : 1.0;
  };
  const auto means = bootstrap_column_means(columns, 2, seed, 0, uint64_t(resamples), 0);
  std::vector<double> ratios(static_cast<size_t>(resamples), 0.0);
  for (size_t r = 0; r < ratios.size(); ++r) ratios[r] = ratio(means[2 * r], means[2 * r + 1]);
  std::sort(ratios.begin(), ratios.end());
  double sum_b = 0, sum_a = 0;
  for (size_t i = 0; i < n; ++i) {
    sum_b += columns[i];
    sum_a += columns[n + i];
  }
  return {ratio(sum_b, sum_a), quantile_linear_sorted(ratios, (1.0 - level) / 2.0),
          quantile_linear_sorted(ratios, (1.0 + level) / 2.0)};
}

PermutationOutcome paired_permutation(std::span<const double> diffs, int resamples, uint64_t seed) {
  SignFlipOptions o;
  o.alternative = Alternative::two_sided;
  o.method = PermutationMethod::automatic;
  o.resamples = uint64_t(resamples);
  o.seed = seed;
  const SignFlipResult r = sign_flip_test(diffs, o);
  return {r.p_value, r.exact, (long long)r.sign_vectors};
}

double mcnemar_p(long long b, long long c) {
  return mcnemar_exact(int64_t(b), int64_t(c)).p_value;
}

std::vector<double> holm(std::span<const double> p) {
  return holm_adjust(p);
}

double smallest_attainable_p(int n, int resamples) {
  return smallest_permutation_p(n, Alternative::two_sided, PermutationMethod::automatic, uint64_t(resamples));
}

int max_rejectable(double smallest_p, int m, double alpha) {
  return int(holm_max_rejections(smallest_p, alpha, m));
}

}  // namespace ncclbot::study
