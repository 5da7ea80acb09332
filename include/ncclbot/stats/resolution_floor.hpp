#pragma once
// Honest reporting: how small a p-value a paired design can produce at all, and what that means
// under Holm. With n paired units and no zero differences, the exact sign-flip test cannot go below
// 1/2^n one-sided or 2/2^n two-sided (nine scenarios: 2/512 = 0.0039). A Monte Carlo test with B
// random sign vectors reports p = (count + 1)/(B + 1), so it never goes below 1/(B + 1) one-sided
// or 2/(B + 1) two-sided; and since it estimates the exact p, its floor is the larger of the two.
// Holm's first step compares the smallest p with alpha/m, so once m * floor > alpha no hypothesis of
// the family can ever be rejected, however large the effect (nine scenarios, alpha = 0.05: at most
// 12 hypotheses).
#include <cstdint>

#include "ncclbot/stats/alternative.hpp"
#include "ncclbot/stats/sign_flip_test.hpp"

namespace ncclbot {

// Smallest exact sign-flip p-value for `nonzero_units` paired differences that are not 0 (a zero
// difference never changes the statistic, so it adds nothing). 1 when nonzero_units == 0; it
// underflows to 0 from about 1075 units, which the functions below accept.
double smallest_sign_flip_p(long nonzero_units, Alternative alternative);

// The floor of the test sign_flip_test() runs with this method and resample count: the exact floor
// when it enumerates (sign_flip_enumerates), else max(exact floor, 1/(B+1) one-sided, 2/(B+1)
// two-sided).
double smallest_permutation_p(long nonzero_units, Alternative alternative, PermutationMethod method,
                              uint64_t resamples);

// What holm_max_family_with_rejection returns when alpha / p_floor exceeds 2^62: any family a study
// can have (the division is settled in log space, so tiny or underflowed floors never overflow).
inline constexpr long kHolmUnlimitedFamily = long(1) << 62;

// Largest family size m with m * p_floor <= alpha: above it Holm rejects nothing. Uses the same
// product and comparison as holm_adjust, so the two can never disagree. p_floor may be 0.
long holm_max_family_with_rejection(double p_floor, double alpha);

// How many of a family of `family_size` hypotheses Holm could reject at best when no p-value can go
// below p_floor: all of them when family_size * p_floor <= alpha, otherwise none.
long holm_max_rejections(double p_floor, double alpha, long family_size);

}  // namespace ncclbot
