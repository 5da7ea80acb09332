// The bootstrap p99's top-region path (only draws of units ranked near the top are kept and
// counted) and its redo with every draw, against the definition written out plainly here: resample
// b draws n units with ResampleStream(seed, b).next_below(n), and its p99 is NumPy's linear
// percentile of the sorted resample. Bit for bit, for every resample, with ties, for edge sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "ncclbot/stats/bootstrap.hpp"
#include "ncclbot/stats/resample_p99.hpp"
#include "ncclbot/stats/resample_stream.hpp"
#include "support/same_bits.hpp"

namespace {

// The resample sorted, then position 0.99 (m - 1) interpolated, as numpy.percentile(..., 99).
double sorted_resample_p99(const std::vector<double>& v, uint64_t seed, uint64_t b) {
  const uint32_t n = uint32_t(v.size());
  ncclbot::ResampleStream stream(seed, b, ncclbot::ResamplePurpose::bootstrap_indices);
  std::vector<double> r(n);
  for (uint32_t i = 0; i < n; ++i) r[i] = v[stream.next_below(n)];
  std::sort(r.begin(), r.end());
  const double pos = 0.99 * double(n - 1);
  const size_t lo = size_t(std::floor(pos)), hi = std::min<size_t>(lo + 1, n - 1);
  return r[lo] + (r[hi] - r[lo]) * (pos - double(lo));
}

// Loss-like values with many ties: a fifth zeros, the rest rounded to two decimals.
std::vector<double> tied_values(size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::exponential_distribution<double> e(20.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(n);
  for (auto& t : v) t = u(gen) < 0.2 ? 0.0 : std::round(e(gen) * 100.0) / 100.0;
  return v;
}

// The sorted values and each unit's rank, as bootstrap.cpp builds them (stable order).
struct Ranking {
  std::vector<double> sorted;
  std::vector<uint32_t> position_of;
  explicit Ranking(const std::vector<double>& v) : sorted(v.size()), position_of(v.size()) {
    std::vector<uint32_t> unit_at(v.size());
    std::iota(unit_at.begin(), unit_at.end(), 0u);
    std::stable_sort(unit_at.begin(), unit_at.end(), [&](uint32_t a, uint32_t b) { return v[a] < v[b]; });
    for (size_t r = 0; r < v.size(); ++r) {
      sorted[r] = v[unit_at[r]];
      position_of[unit_at[r]] = uint32_t(r);
    }
  }
  ncclbot::RankedValues view() const { return {sorted, position_of}; }
};

}  // namespace

TEST(BootstrapP99Paths, EveryResampleEqualsTheSortedResample) {
  const uint64_t seed = 31;
  for (size_t n : {size_t(1), size_t(2), size_t(99), size_t(100), size_t(101), size_t(10001)})
    for (unsigned threads : {1u, 2u}) {
      const std::vector<double> x = tied_values(n, unsigned(n));
      ncclbot::BootstrapOptions opt;
      opt.statistic = ncclbot::BootstrapStatistic::p99;
      opt.method = ncclbot::IntervalMethod::percentile;
      opt.resamples = n > 1000 ? 61 : 301;
      opt.seed = seed;
      opt.threads = threads;
      const std::vector<double> got = ncclbot::bootstrap_distribution(x, opt, 5, opt.resamples);
      for (uint64_t k = 0; k < opt.resamples; ++k)
        ASSERT_TRUE(ncclbot::test::same_bits(got[k], sorted_resample_p99(x, seed, 5 + k)))
            << "n " << n << " threads " << threads << " resample " << 5 + k;
    }
}

// Regions of one rank up to all of them: the small ones leave too few draws in the region for
// most resamples, so the redo with every draw runs, and paired resamples need both samples' walks.
TEST(BootstrapP99Paths, AnyRegionAndPairedDifferencesEqualTheSortedResamples) {
  const uint64_t seed = 8;
  for (size_t n : {size_t(2), size_t(101), size_t(1000)})
    for (size_t region : {size_t(1), size_t(3), size_t(12), n}) {
      const std::vector<double> x = tied_values(n, 3), y = tied_values(n, 4);
      const Ranking rx(x), ry(y);
      const ncclbot::ResampleP99 alone(rx.view(), std::nullopt, region);
      const ncclbot::ResampleP99 paired(rx.view(), ry.view(), region);
      const uint64_t count = 101;
      std::vector<double> got_alone(count), got_paired(count);
      alone.run(seed, 0, count, got_alone.data());
      paired.run(seed, 0, count, got_paired.data());
      for (uint64_t b = 0; b < count; ++b) {
        const double px = sorted_resample_p99(x, seed, b), py = sorted_resample_p99(y, seed, b);
        ASSERT_TRUE(ncclbot::test::same_bits(got_alone[b], px))
            << "n " << n << " region " << region << " b " << b;
        ASSERT_TRUE(ncclbot::test::same_bits(got_paired[b], px - py))
            << "n " << n << " region " << region << " b " << b;
      }
    }
}

// Paired samples whose top units differ: y is x with its five smallest values made the largest, so
// the draws that set y's p99 include units far from the top of x, which must be kept too.
TEST(BootstrapP99Paths, PairedDifferencesKeepTheTopOfEitherSample) {
  const uint64_t seed = 12, count = 203;
  const std::vector<double> x = tied_values(1000, 5);
  std::vector<double> y = x;
  std::vector<uint32_t> order(x.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return x[a] < x[b]; });
  for (int i = 0; i < 5; ++i) y[order[size_t(i)]] = 10.0 + i;
  const Ranking rx(x), ry(y);
  const ncclbot::ResampleP99 paired(rx.view(), ry.view());
  std::vector<double> got(count);
  paired.run(seed, 0, count, got.data());
  for (uint64_t b = 0; b < count; ++b)
    ASSERT_TRUE(
        ncclbot::test::same_bits(got[b], sorted_resample_p99(x, seed, b) - sorted_resample_p99(y, seed, b)))
        << "resample " << b;
}
