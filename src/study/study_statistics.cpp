// The study's statistics, each a direct call into the statistics library with the same options the
// matching `ncclbot stats` subcommand takes, so results.json can be checked number for number.
#include "study/study_statistics.hpp"

#include "ncclbot/stats/loss_summary.hpp"
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
