// The bootstrap mean's fast paths (two resamples interleaved, four in AVX2 lanes, the scalar redo of
// a group with a possibly rejected draw, the n mod 4 tail) against the definition written out
// plainly here: resample b draws n units with ResampleStream(seed, b).next_below(n), draw i is
// added to partial sum i mod 4, and the mean is ((s0 + s1) + (s2 + s3)) / n. Bit for bit, for
// every resample, on any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ncclbot/stats/bootstrap.hpp"
#include "ncclbot/stats/resample_stream.hpp"
#include "support/same_bits.hpp"

using namespace ncclbot;

namespace {

double plain_mean(const std::vector<double>& v, uint64_t seed, uint64_t b, const std::vector<double>* y) {
  const uint32_t n = uint32_t(v.size());
  ResampleStream stream(seed, b, ResamplePurpose::bootstrap_indices);
  double sx[4] = {0, 0, 0, 0}, sy[4] = {0, 0, 0, 0};
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t u = stream.next_below(n);
    sx[i & 3] += v[u];
    if (y) sy[i & 3] += (*y)[u];
  }
  const double mx = ((sx[0] + sx[1]) + (sx[2] + sx[3])) / double(n);
  const double my = ((sy[0] + sy[1]) + (sy[2] + sy[3])) / double(n);
  return y ? mx - my : mx;
}

std::vector<double> values(size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::exponential_distribution<double> e(20.0);
  std::vector<double> v(n);
  for (auto& t : v) t = e(gen);
  return v;
}

using ncclbot::test::same_bits;

// Resamples among 0..B-1 whose first n words include one that Lemire's method rejects (low 32 bits
// of word * n below 2^32 mod n): the groups holding them take the scalar redo.
int possibly_rejected(uint32_t n, uint64_t seed, uint64_t B) {
  int count = 0;
  for (uint64_t b = 0; b < B; ++b) {
    ResampleStream s(seed, b, ResamplePurpose::bootstrap_indices);
    for (uint32_t i = 0; i < n; ++i)
      if (uint32_t(uint64_t(s.next_word()) * n) < uint32_t(-n) % n) {
        ++count;
        break;
      }
  }
  return count;
}

}  // namespace

TEST(BootstrapMeanPaths, EveryResampleEqualsThePlainDefinition) {
  const uint64_t seed = 99;
  for (size_t n : {size_t(1), size_t(3), size_t(4), size_t(7), size_t(10000), size_t(10001)})
    for (unsigned threads : {1u, 2u})
      for (bool paired : {false, true}) {
        const std::vector<double> x = values(n, 1), y = values(n, 2);
        BootstrapOptions opt;
        opt.statistic = BootstrapStatistic::mean;
        opt.method = IntervalMethod::percentile;  // BCa needs n >= 2
        opt.resamples = n >= 10000 ? 401 : 203;   // not a multiple of 4 or 2: every tail path
        opt.seed = seed;
        opt.threads = threads;
        opt.keep_distribution = true;
        const BootstrapResult r =
            paired ? bootstrap_paired_difference(x, y, opt) : bootstrap_interval(x, opt);
        ASSERT_EQ(r.distribution.size(), opt.resamples);
        for (uint64_t b = 0; b < opt.resamples; ++b)
          ASSERT_TRUE(same_bits(r.distribution[b], plain_mean(x, seed, b, paired ? &y : nullptr)))
              << "n " << n << " threads " << threads << " paired " << paired << " resample " << b;
      }
  // The n = 10^4 and 10^4 + 1 cases above do reach the redo path (about 1.7 % of resamples each).
  EXPECT_GT(possibly_rejected(10000, seed, 401), 0);
  EXPECT_GT(possibly_rejected(10001, seed, 401), 0);
}

// Several columns resampled with the same draws (the block bootstrap of ope/ sums blocks' statistics
// this way): each column's mean in resample b is the plain definition's, an odd column count
// leaves the last one alone, and a slice [first, first + count) is that slice of the whole.
TEST(BootstrapMeanPaths, ColumnMeansAreEachColumnsPlainMeansAtTheSameDraws) {
  const uint64_t seed = 7;
  for (size_t n : {size_t(1), size_t(5), size_t(10001)})
    for (size_t k : {size_t(1), size_t(3), size_t(4)})
      for (unsigned threads : {1u, 2u}) {
        std::vector<std::vector<double>> column(k);
        std::vector<double> all;
        for (size_t c = 0; c < k; ++c) {
          column[c] = values(n, unsigned(10 + c));
          all.insert(all.end(), column[c].begin(), column[c].end());
        }
        const uint64_t first = 3, count = 203;
        const std::vector<double> got = bootstrap_column_means(all, k, seed, first, count, threads);
        ASSERT_EQ(got.size(), count * k);
        for (uint64_t b = 0; b < count; ++b)
          for (size_t c = 0; c < k; ++c)
            ASSERT_TRUE(same_bits(got[b * k + c], plain_mean(column[c], seed, first + b, nullptr)))
                << "n " << n << " k " << k << " threads " << threads << " resample " << first + b;
      }
  EXPECT_THROW(bootstrap_column_means(std::vector<double>{1, 2, 3}, 2, 0, 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(bootstrap_column_means(std::vector<double>{1, NAN}, 1, 0, 0, 1, 1), std::invalid_argument);
}

TEST(ResampleStream, NextFourEqualsFourSingleDraws) {
  // n = 3 * 2^30 makes a possibly rejected word likely (probability 3/4 per word), so both the
  // fast path and the redo from the saved state are taken many times.
  for (uint32_t n : {1u, 10u, 10000u, 3u << 30})
    for (uint64_t b = 0; b < 50; ++b) {
      ResampleStream a(5, b, ResamplePurpose::bootstrap_indices), c = a;
      for (int k = 0; k < 40; ++k) {
        if (k % 7 == 3) {  // leave the pair boundary too
          ASSERT_EQ(a.next_below(n), c.next_below(n));
        }
        uint32_t four[4];
        a.next4_below(n, four);
        for (int l = 0; l < 4; ++l) ASSERT_EQ(four[l], c.next_below(n)) << "n " << n << " b " << b;
      }
    }
}
