// The smallest attainable p of the sign-flip test as the study runs it: exact enumeration up to 30
// units, Monte Carlo beyond (p >= 1/(B+1) one-sided, 2/(B+1) two-sided), and Holm's bound on what
// a family can reject, for any number of units (no overflow at 64, no throw at 1075).
// Expected values by hand; the Holm bounds with Python's IEEE doubles:
//   python3 -c "import math
//   def hmax(p,a):
//     m=math.floor(a/p)
//     while m>0 and not (m*p<=a): m-=1
//     while (m+1)*p<=a: m+=1
//     return m
//   print(hmax(2/10000,0.05), hmax(2/512,0.05), math.floor(0.05/2**-63))"   -> 250 12 461168601842738816
#include <gtest/gtest.h>

#include <cmath>

#include "ncclbot/stats/resolution_floor.hpp"

namespace ncclbot {
namespace {

TEST(ResolutionFloor, ExactUpToThirtyUnits) {
  EXPECT_EQ(smallest_permutation_p(9, Alternative::two_sided, PermutationMethod::automatic, 9999),
            2.0 / 512.0);
  EXPECT_EQ(smallest_permutation_p(30, Alternative::greater, PermutationMethod::automatic, 999),
            std::ldexp(1.0, -30));
  // 2^13 = 8192 <= 9999 resamples would also enumerate; 13 <= 30 anyway.
  EXPECT_EQ(smallest_permutation_p(13, Alternative::two_sided, PermutationMethod::automatic, 9999),
            2.0 / 8192.0);
}

TEST(ResolutionFloor, MonteCarloBeyondThirtyUnits) {
  // 31 units with 9999 draws: the test samples, so p >= 2/(9999 + 1), not 2/2^31.
  EXPECT_EQ(smallest_permutation_p(31, Alternative::two_sided, PermutationMethod::automatic, 9999),
            2.0 / 10000.0);
  EXPECT_EQ(smallest_permutation_p(64, Alternative::two_sided, PermutationMethod::automatic, 9999),
            2.0 / 10000.0);
  EXPECT_EQ(smallest_permutation_p(1075, Alternative::two_sided, PermutationMethod::automatic, 9999),
            2.0 / 10000.0);
  EXPECT_EQ(smallest_permutation_p(100000, Alternative::less, PermutationMethod::automatic, 99), 1.0 / 100.0);
  // Forced Monte Carlo on 3 units: it estimates an exact p that cannot go below 2/8.
  EXPECT_EQ(smallest_permutation_p(3, Alternative::two_sided, PermutationMethod::monte_carlo, 99999), 0.25);
  // 2^31 <= 2^31 resamples: enumerates, as sign_flip_test() would.
  EXPECT_EQ(smallest_permutation_p(31, Alternative::greater, PermutationMethod::automatic, uint64_t(1) << 31),
            std::ldexp(1.0, -31));
}

TEST(ResolutionFloor, HolmBoundsNeverOverflowOrThrow) {
  EXPECT_EQ(holm_max_family_with_rejection(2.0 / 10000.0, 0.05), 250);
  EXPECT_EQ(holm_max_family_with_rejection(2.0 / 512.0, 0.05), 12);
  // 64 units, one-sided exact floor 2^-63 (two-sided): alpha / p = 0.05 * 2^63 fits, no overflow.
  EXPECT_EQ(holm_max_family_with_rejection(smallest_sign_flip_p(64, Alternative::two_sided), 0.05),
            461168601842738816L);
  // 1075 and more units: the exact floor underflows to 0; the bound saturates instead of throwing.
  EXPECT_EQ(smallest_sign_flip_p(1075, Alternative::greater), 0.0);
  EXPECT_EQ(holm_max_family_with_rejection(smallest_sign_flip_p(1075, Alternative::greater), 0.05),
            kHolmUnlimitedFamily);
  EXPECT_EQ(holm_max_family_with_rejection(std::ldexp(1.0, -200), 0.05), kHolmUnlimitedFamily);
  EXPECT_EQ(holm_max_rejections(0.0, 0.05, 1000), 1000);
  EXPECT_EQ(holm_max_rejections(2.0 / 10000.0, 0.05, 251), 0);
  EXPECT_EQ(holm_max_rejections(2.0 / 10000.0, 0.05, 250), 250);
}

}  // namespace
}  // namespace ncclbot
