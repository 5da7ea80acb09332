// The scorecard's three-way verdict rules on hand-made intervals: inside what a claim allows, wholly
// outside it, and straddling its edge; the parts of a claim together; equivalence against a margin.
#include "report/claim_verdict.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace ncclbot::report {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ClaimVerdict, AnIntervalInsideOutsideOrAcrossTheBand) {
  // The original's 1.6% within +-50%: [0.8%, 2.4%].
  const Region band = band_region(0.016, 0.5);
  EXPECT_DOUBLE_EQ(band.low, 0.008);
  EXPECT_DOUBLE_EQ(band.high, 0.024);
  EXPECT_EQ(interval_verdict(0.010, 0.020, band), Verdict::kAgree);
  EXPECT_EQ(interval_verdict(0.003, 0.006, band), Verdict::kDisagree);  // wholly below
  EXPECT_EQ(interval_verdict(0.030, 0.040, band), Verdict::kDisagree);  // wholly above
  // The bandit's p99 against the original's 9.9%: 5.08% [4.14%, 6.05%] straddles the lower edge 4.95%.
  EXPECT_EQ(interval_verdict(0.0414, 0.0605, band_region(0.099, 0.5)), Verdict::kInconclusive);
  EXPECT_EQ(interval_verdict(0.005, 0.030, band), Verdict::kInconclusive);  // covers the band
  EXPECT_EQ(interval_verdict(0.008, 0.024, band), Verdict::kAgree);         // the edges are in
}

TEST(ClaimVerdict, ADirectionNeedsTheWholeIntervalOnItsSide) {
  const Region lower = direction_region(true), higher = direction_region(false);
  EXPECT_EQ(interval_verdict(-0.05, -0.01, lower), Verdict::kAgree);
  EXPECT_EQ(interval_verdict(-0.05, 0.0, lower), Verdict::kInconclusive);  // reaches no difference
  EXPECT_EQ(interval_verdict(0.0, 0.02, lower), Verdict::kDisagree);       // b is not lower anywhere
  EXPECT_EQ(interval_verdict(0.0, 0.0, lower), Verdict::kDisagree);
  EXPECT_EQ(interval_verdict(0.01, 0.02, higher), Verdict::kAgree);
  EXPECT_EQ(interval_verdict(-0.01, 0.02, higher), Verdict::kInconclusive);
}

TEST(ClaimVerdict, ARatioKeepsItsSideOfOne) {
  // 13/10 within +-50% is [0.65, 1.95]; claimed to rise, only (1, 1.95] is allowed.
  const Region rise = side_of(band_region(1.3, 0.5), 1.0, false);
  EXPECT_GT(rise.low, 1.0);
  EXPECT_DOUBLE_EQ(rise.high, 1.95);
  EXPECT_EQ(interval_verdict(0.7, 0.9, rise), Verdict::kDisagree);  // in the band, but a fall
  EXPECT_EQ(interval_verdict(1.1, 1.5, rise), Verdict::kAgree);
  EXPECT_EQ(interval_verdict(0.9, 1.5, rise), Verdict::kInconclusive);
  // 1/19 claimed to fall: [0.0263, 0.0789]; an unbounded upper end is never inside.
  const Region fall = side_of(band_region(1.0 / 19, 0.5), 1.0, true);
  EXPECT_EQ(interval_verdict(0.0, kInf, fall), Verdict::kInconclusive);
  EXPECT_EQ(interval_verdict(0.1, 0.5, fall), Verdict::kDisagree);
  EXPECT_EQ(interval_verdict(0.03, 0.07, fall), Verdict::kAgree);
}

TEST(ClaimVerdict, PartsCombine) {
  using V = Verdict;
  EXPECT_EQ(combine({V::kAgree, V::kAgree}), V::kAgree);
  EXPECT_EQ(combine({V::kAgree, V::kInconclusive}), V::kInconclusive);
  EXPECT_EQ(combine({V::kInconclusive, V::kDisagree, V::kAgree}), V::kDisagree);
  EXPECT_STREQ(verdict_name(V::kInconclusive), "inconclusive");
}

// Equivalence from the test's own numbers: hand-made p-values and (1 - 2 alpha) intervals.
TEST(ClaimVerdict, EquivalenceAgainstAMargin) {
  EquivalenceResult inside;  // both one-sided tests reject
  inside.p_lower = 0.001, inside.p_upper = 0.02, inside.p = 0.02, inside.low = -0.004, inside.high = 0.006;
  EXPECT_EQ(equivalence_verdict(inside, 0.009, 0.05, false), Verdict::kAgree);
  EquivalenceResult beyond;  // the whole interval above the margin
  beyond.p_lower = 0.0, beyond.p_upper = 0.9, beyond.p = 0.9, beyond.low = 0.012, beyond.high = 0.03;
  EXPECT_EQ(equivalence_verdict(beyond, 0.009, 0.05, false), Verdict::kDisagree);
  EXPECT_EQ(equivalence_verdict(beyond, 0.009, 0.05, true), Verdict::kDisagree);
  EquivalenceResult across;  // straddles +margin
  across.p_lower = 0.0, across.p_upper = 0.3, across.p = 0.3, across.low = 0.002, across.high = 0.015;
  EXPECT_EQ(equivalence_verdict(across, 0.009, 0.05, false), Verdict::kInconclusive);
  EquivalenceResult much_lower;  // b far better than a: not equivalent, but no worse
  much_lower.p_lower = 0.95, much_lower.p_upper = 0.0, much_lower.p = 0.95, much_lower.low = -0.05,
  much_lower.high = -0.02;
  EXPECT_EQ(equivalence_verdict(much_lower, 0.009, 0.05, false), Verdict::kDisagree);
  EXPECT_EQ(equivalence_verdict(much_lower, 0.009, 0.05, true), Verdict::kAgree);
}

}  // namespace
}  // namespace ncclbot::report
