// Bootstrap intervals against scipy.stats.bootstrap (scripts/reference_stats.py), by what is
// deterministic (estimate, jackknife acceleration) and by what is Monte Carlo (levels, endpoints).
#include "ncclbot/stats/bootstrap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "stats/reference_data.hpp"

using namespace ncclbot;

namespace {

BootstrapOptions options_of(const nlohmann::json& k) {
  BootstrapOptions opt;
  opt.statistic = parse_bootstrap_statistic(k["statistic"].get<std::string>());
  opt.threshold = k["threshold"].get<double>();
  opt.level = k["level"].get<double>();
  opt.method = parse_interval_method(k["method"].get<std::string>());
  opt.resamples = k["resamples"].get<uint64_t>();
  opt.seed = 2026;
  opt.threads = 2;
  opt.keep_distribution = true;
  return opt;
}

BootstrapResult run_case(const nlohmann::json& k, const BootstrapOptions& opt) {
  const std::vector<double> x = test::as_doubles(k["x"]);
  if (k.contains("y")) return bootstrap_paired_difference(x, test::as_doubles(k["y"]), opt);
  return bootstrap_interval(x, opt);
}

// Distance from `level` to the range of levels at which `value` sits in the sorted distribution
// (between the fraction strictly below it and the fraction at or below it, widened by 1/B for the
// linear interpolation between neighbouring order statistics).
double level_distance(const std::vector<double>& sorted, double value, double level) {
  const double B = double(sorted.size());
  const double below =
      double(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin()) / B - 1.0 / B;
  const double at_or_below =
      double(std::upper_bound(sorted.begin(), sorted.end(), value) - sorted.begin()) / B + 1.0 / B;
  return level < below ? below - level : level > at_or_below ? level - at_or_below : 0.0;
}

// The sample standard deviation of B draws has relative sd sqrt((kurtosis - 1) / (4B)); the lumpy
// distributions of max or count differences have large kurtosis, so take it from the distribution:
// 5 sd of the difference of two independent estimates.
double se_tolerance(const std::vector<double>& dist, double se) {
  double mean = 0.0;
  for (double t : dist) mean += t;
  mean /= double(dist.size());
  double m2 = 0.0, m4 = 0.0;
  for (double t : dist) {
    const double d2 = (t - mean) * (t - mean);
    m2 += d2;
    m4 += d2 * d2;
  }
  m2 /= double(dist.size());
  m4 /= double(dist.size());
  if (m2 == 0.0) return 0.0;  // a constant distribution: both standard errors are exactly 0
  const double kurtosis = m4 / (m2 * m2);
  return 5.0 * std::sqrt(2.0) * std::sqrt((kurtosis - 1.0) / (4.0 * double(dist.size()))) * se;
}

}  // namespace

// Tolerances. Each side draws B = 100,000 resamples with its own generator, so only the
// deterministic parts can agree to rounding: the estimate (1e-12) and the jackknife acceleration a
// (1e-9 relative: the closed-form leave-one-out statistics differ from NumPy's recomputed ones only
// by rounding). The rest is sampling noise:
//  - z0 comes from the fraction F of resamples below the estimate, sd sqrt(F(1-F)/B) <= 0.0016,
//    which moves the BCa levels (near 0.025 and 0.975) by at most about 0.0015 per side; the
//    quantile at a level p itself has level-noise sqrt(p(1-p)/B) = 0.0005. Combined over both
//    implementations the level sd is about 0.0015, so levels must agree within 0.008 (5 sd).
//  - endpoints are checked on the level scale: SciPy's endpoint must sit in our bootstrap
//    distribution within 0.008 of our level. This works for the lumpy distributions of max,
//    count_above and p99 too, where endpoint values jump between atoms.
//  - for the mean (continuous) the endpoints must also agree in value within 0.06 standard errors
//    (quantile sd ~ sqrt(p(1-p)/B)/phi(z_p) = 0.0085 se per side, 0.012 combined: 5 sd).
//  - the standard error of the bootstrap distribution within 5 sd of its sampling error (se_tolerance).
TEST(Bootstrap, MatchesScipyWithinMonteCarloError) {
  const auto cases = test::reference_cases("bootstrap.json");
  int checked = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& k = cases[c];
    if (k.contains("degenerate")) continue;
    ++checked;
    const BootstrapOptions opt = options_of(k);
    const BootstrapResult r = run_case(k, opt);
    if (k["low"].is_null()) {  // SciPy found BCa undefined (e.g. a constant jackknife): so must we
      EXPECT_TRUE(r.degenerate) << "case " << c;
      continue;
    }
    const std::string label = "case " + std::to_string(c) + " " + k["statistic"].get<std::string>() + " " +
                              k["method"].get<std::string>() + (k.contains("y") ? " paired" : "") +
                              " n=" + std::to_string(k["x"].size());
    const double est = k["estimate"].get<double>();
    EXPECT_NEAR(r.estimate, est, 1e-12 * std::max(1.0, std::abs(est))) << label;
    ASSERT_FALSE(r.degenerate) << label;
    if (opt.method == IntervalMethod::bca) {
      const double a = test::as_double(k["acceleration"]);
      EXPECT_NEAR(r.acceleration, a, 1e-9 * std::max(1e-3, std::abs(a))) << label;
      EXPECT_NEAR(r.level_low, k["level_low"].get<double>(), 0.008) << label;
      EXPECT_NEAR(r.level_high, k["level_high"].get<double>(), 0.008) << label;
    } else {
      EXPECT_NEAR(r.level_low, k["level_low"].get<double>(), 1e-15);
      EXPECT_NEAR(r.level_high, k["level_high"].get<double>(), 1e-15);
    }
    std::vector<double> sorted = r.distribution;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_LE(level_distance(sorted, k["low"].get<double>(), r.level_low), 0.008) << label;
    EXPECT_LE(level_distance(sorted, k["high"].get<double>(), r.level_high), 0.008) << label;
    const double se = k["standard_error"].get<double>();
    EXPECT_NEAR(r.standard_error, se, se_tolerance(r.distribution, se)) << label;
    if (opt.statistic == BootstrapStatistic::mean) {
      EXPECT_NEAR(r.low, k["low"].get<double>(), 0.06 * se) << label;
      EXPECT_NEAR(r.high, k["high"].get<double>(), 0.06 * se) << label;
    }
  }
  EXPECT_GE(checked, 32);
}

TEST(Bootstrap, DegenerateDistributionGivesNoInterval) {
  // Every value below the threshold: every resample counts 0, z0 = Phi^-1(1/2) = 0 but the
  // jackknife is constant, so a = 0/0 and BCa is undefined (SciPy returns NaN and warns).
  const auto cases = test::reference_cases("bootstrap.json");
  const auto& k = cases.back();
  ASSERT_TRUE(k.contains("degenerate"));
  EXPECT_TRUE(k["low"].is_null());
  BootstrapOptions opt = options_of(k);
  const BootstrapResult r = run_case(k, opt);
  EXPECT_TRUE(r.degenerate);
  EXPECT_TRUE(std::isnan(r.low) && std::isnan(r.high));
  EXPECT_EQ(r.estimate, 0.0);
  opt.method = IntervalMethod::percentile;  // the percentile interval is defined: [0, 0]
  const BootstrapResult p = run_case(k, opt);
  EXPECT_FALSE(p.degenerate);
  EXPECT_EQ(p.low, 0.0);
  EXPECT_EQ(p.high, 0.0);
}

TEST(Bootstrap, AccelerationOfTheMeanIsTheSampleSkewnessOverSix) {
  // For the mean, a = sum (x - xbar)^3 / (6 (sum (x - xbar)^2)^(3/2)). x = {0,0,0,1}: deviations
  // -1/4 (x3) and 3/4: sum of cubes 0.375, sum of squares 0.75 -> a = 0.375 / (6 * 0.75^1.5).
  const std::vector<double> x = {0, 0, 0, 1};
  BootstrapOptions opt;
  opt.resamples = 2000;
  const BootstrapResult r = bootstrap_interval(x, opt);
  EXPECT_NEAR(r.acceleration, 0.375 / (6 * std::pow(0.75, 1.5)), 1e-14);
  EXPECT_DOUBLE_EQ(r.estimate, 0.25);
}

TEST(Bootstrap, P99OfResamplesMatchesDirectComputation) {
  // The draw-count walk must give what sorting the resample gives. With n = 3 the p99 of a resample
  // is the interpolation at position 0.99 * 2 = 1.98 between its 2nd and 3rd smallest values.
  const std::vector<double> x = {1.0, 2.0, 3.0};
  BootstrapOptions opt;
  opt.statistic = BootstrapStatistic::p99;
  opt.method = IntervalMethod::percentile;
  opt.resamples = 5000;
  opt.keep_distribution = true;
  const BootstrapResult r = bootstrap_interval(x, opt);
  // Possible resample p99 values: a + 0.98 (b - a) for sorted resample (., a, b).
  std::vector<double> possible;
  for (double a : x)
    for (double b : x)
      if (b >= a) possible.push_back(a + (b - a) * 0.98);
  for (double t : r.distribution) {
    const bool ok = std::any_of(possible.begin(), possible.end(), [&](double p) { return p == t; });
    ASSERT_TRUE(ok) << t;
  }
  // p99 = a + 0.98 (b - a) >= 2.98 iff b = 3 and a >= 2, i.e. at most one draw is 1 and at least one
  // is 3: P(at most one 1) = 8/27 + 12/27 = 20/27, minus P(no 3 and at most one 1) = 1/27 + 3/27,
  // gives 16/27. The share must match within 5 binomial standard deviations.
  const double share = double(std::count_if(r.distribution.begin(), r.distribution.end(),
                                            [](double t) { return t >= 2.98; })) /
                       5000.0;
  EXPECT_NEAR(share, 16.0 / 27.0, 5 * std::sqrt(16.0 / 27 * 11 / 27 / 5000));
  EXPECT_DOUBLE_EQ(r.estimate, 2.0 + 0.98);
}

TEST(Bootstrap, DeterministicForAnyThreadCount) {
  std::vector<double> x, y;
  for (int i = 0; i < 300; ++i) {
    x.push_back(std::fmod(i * 0.6180339887, 1.0) * 0.3);
    y.push_back(std::fmod(i * 0.41421356, 1.0) * 0.25);
  }
  for (auto stat : {BootstrapStatistic::mean, BootstrapStatistic::p99, BootstrapStatistic::max,
                    BootstrapStatistic::count_above}) {
    BootstrapOptions opt;
    opt.statistic = stat;
    opt.resamples = 3001;
    opt.seed = 5;
    opt.keep_distribution = true;
    opt.threads = 1;
    const BootstrapResult one = bootstrap_paired_difference(x, y, opt);
    opt.threads = 4;
    const BootstrapResult four = bootstrap_paired_difference(x, y, opt);
    EXPECT_EQ(one.distribution, four.distribution) << to_string(stat);
    EXPECT_EQ(one.low, four.low);
    EXPECT_EQ(one.high, four.high);
    opt.seed = 6;
    EXPECT_NE(bootstrap_paired_difference(x, y, opt).distribution, one.distribution) << to_string(stat);
  }
}

TEST(Bootstrap, RejectsBadInput) {
  BootstrapOptions opt;
  EXPECT_THROW(bootstrap_interval(std::vector<double>{}, opt), std::invalid_argument);
  EXPECT_THROW(bootstrap_interval(std::vector<double>{1.0}, opt), std::invalid_argument);  // BCa, n = 1
  EXPECT_THROW(bootstrap_interval(std::vector<double>{1.0, std::nan("")}, opt), std::invalid_argument);
  EXPECT_THROW(bootstrap_paired_difference(std::vector<double>{1, 2}, std::vector<double>{1}, opt),
               std::invalid_argument);
  opt.resamples = 0;
  EXPECT_THROW(bootstrap_interval(std::vector<double>{1.0, 2.0}, opt), std::invalid_argument);
  opt.resamples = 10;
  opt.level = 1.0;
  EXPECT_THROW(bootstrap_interval(std::vector<double>{1.0, 2.0}, opt), std::invalid_argument);
}
