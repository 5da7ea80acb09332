#pragma once
// The statistics a study reports, as the study needs them. Every function delegates to the
// statistics library (include/ncclbot/stats, the code behind `ncclbot stats`), so each number in a
// report can be recomputed from results.json with the matching `ncclbot stats` call.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ncclbot/stats/bootstrap.hpp"
#include "study/study_spec.hpp"

namespace ncclbot::study {

// The value of one metric over per-context losses (above_10pct is a count).
double metric_value(std::span<const double> losses, Metric m);

struct Interval {
  double estimate = 0, low = 0, high = 0;
};
// The statistics a report gives intervals for: the three metrics and the max.
enum class Statistic { kMean, kP99, kMax, kAbove10pct };
// The `statistic` field of the matching `ncclbot stats bootstrap` call ("count_above" is used with
// threshold 0.1).
const char* statistic_name(Statistic s);
// Percentile bootstrap interval over contexts (= `ncclbot stats bootstrap` with the same
// statistic, threshold, level, resamples and seed, method "percentile").
Interval bootstrap_interval(std::span<const double> losses, Statistic st, double level, int resamples,
                            uint64_t seed);

// Percentile bootstrap interval of statistic(b) - statistic(a) over contexts scored for both, the
// same resampled contexts feeding both sides (= `ncclbot stats bootstrap` with paired data).
Interval paired_difference_interval(std::span<const double> b, std::span<const double> a, Statistic st,
                                    double level, int resamples, uint64_t seed);

// Percentile bootstrap interval of the ratio (contexts of b above 10%) / (contexts of a above 10%) over
// paired contexts. A resample with neither above counts as 1 (no change), one with only b's above as
// the largest double (unbounded).
Interval paired_ratio_above_interval(std::span<const double> b, std::span<const double> a, double level,
                                     int resamples, uint64_t seed);

// The bootstrap behind bootstrap_interval(): ncclbot::bootstrap_interval() unless replaced;
// `run-units` under MPI installs one that splits the resamples over the ranks
// (scale/bootstrap_on_ranks.hpp). A replacement must return the same estimate, low and high.
// An empty function restores the default.
using IntervalBootstrap = std::function<BootstrapResult(std::span<const double>, const BootstrapOptions&)>;
void set_interval_bootstrap(IntervalBootstrap bootstrap);
bool interval_bootstrap_installed();

struct PermutationOutcome {
  double p = 1;
  bool exact = false;
  long long sign_vectors = 0;  // 2^n when exact, else the Monte Carlo draws
};
// Two-sided paired sign-flip permutation test of the mean of `diffs`
// (= `ncclbot stats permutation` with the same diffs, resamples and seed).
PermutationOutcome paired_permutation(std::span<const double> diffs, int resamples, uint64_t seed);

// Exact McNemar p for b discordant pairs one way and c the other (= `ncclbot stats mcnemar`).
double mcnemar_p(long long b, long long c);

// Holm step-down adjusted p-values (= `ncclbot stats holm`).
std::vector<double> holm(std::span<const double> p);

// The smallest two-sided p the study's sign-flip test over n paired units can reach (exact up to 30
// units, Monte Carlo with `resamples` draws beyond: 2/(resamples + 1)), and how many of m
// hypotheses Holm could reject at alpha if every raw p were that small.
double smallest_attainable_p(int n, int resamples);
int max_rejectable(double smallest_p, int m, double alpha);

}  // namespace ncclbot::study
