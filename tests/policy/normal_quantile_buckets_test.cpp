// The word buckets Thompson sampling bounds its draws with (policy/normal_quantile_buckets.hpp):
// every word's computed normal draw must lie inside its bucket's bounds, or the pruned pick could
// differ from the full draw's. Checked at every bucket's edge words, on a million random words, and,
// with NCCLBOT_EXHAUSTIVE=1 in the environment, on all 2^32 words (46 s on the 2-core Intel VM).
#include "ncclbot/policy/normal_quantile_buckets.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

using namespace ncclbot;

namespace {

using B = NormalQuantileBuckets;

::testing::AssertionResult inside(uint32_t w) {
  const B& t = normal_quantile_buckets();
  const double z = normal_quantile(uniform_open01(w));
  const int b = B::bucket(w);
  if (t.lo[b] <= z && z <= t.hi[b]) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "word " << w << " draws " << z << " outside bucket " << b << " ["
                                       << t.lo[b] << ", " << t.hi[b] << "]";
}

}  // namespace

TEST(NormalQuantileBuckets, EveryBucketsEdgeWordsLieInside) {
  for (uint32_t b = 0; b < uint32_t(B::kCount); ++b) {
    const uint32_t first = b << B::kShift, last = first + ((1u << B::kShift) - 1u);
    for (uint32_t w : {first, first + 1u, first + 2u, last - 2u, last - 1u, last}) ASSERT_TRUE(inside(w));
  }
}

TEST(NormalQuantileBuckets, RandomWordsLieInside) {
  std::mt19937 gen(2026);
  for (int i = 0; i < 1000000; ++i) ASSERT_TRUE(inside(uint32_t(gen())));
}

// The buckets follow the normal's quantiles (SciPy: scipy.stats.norm.ppf(q) at q = 0.5, 0.75 and
// 2^-10): the bounds of the buckets that start there, and buckets narrow enough to decide most
// contests (the middle one is 1/1024 of probability wide: 0.00245 in z).
TEST(NormalQuantileBuckets, BoundsAreTheNormalsQuantilesAtTheBucketEdges) {
  const B& t = normal_quantile_buckets();
  EXPECT_NEAR(t.lo[512], 0.0, 1e-9);
  EXPECT_NEAR(t.lo[768], 0.6744897501960817, 1e-9);
  EXPECT_NEAR(t.hi[0], -3.0972690781987846, 1e-6);
  EXPECT_NEAR(t.hi[512] - t.lo[512], 0.0024479, 1e-6);
  for (int b = 0; b + 1 < B::kCount; ++b) ASSERT_LE(t.hi[b], t.lo[b + 1] + 2 * B::kMargin) << b;
}

TEST(NormalQuantileBuckets, AllWordsLieInsideWhenAsked) {
  const char* all = std::getenv("NCCLBOT_EXHAUSTIVE");
  if (!all || std::string(all) != "1") GTEST_SKIP() << "set NCCLBOT_EXHAUSTIVE=1 to check all 2^32 words";
  uint32_t w = 0;
  do {
    ASSERT_TRUE(inside(w));
  } while (++w != 0);
}
