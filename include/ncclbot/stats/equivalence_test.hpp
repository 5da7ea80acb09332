#pragma once
// Equivalence of paired differences with a margin: two one-sided t-tests (TOST), and the
// non-inferiority test that is its upper half. "The two do not differ by more than the margin" is
// shown when both one-sided nulls (mean <= -margin, mean >= +margin) are rejected; a test that does
// not reject shows nothing either way. Equivalent to the (1 - 2 alpha) t-interval of the mean lying
// inside (-margin, +margin); statsmodels.stats.weightstats.ttost_paired gives the same p-values.
#include <span>

namespace ncclbot {

struct EquivalenceResult {
  double mean = 0, standard_error = 0;
  int df = 0;                // n - 1
  double p_lower = 1;        // H0: mean <= -margin (rejected: the mean is above -margin)
  double p_upper = 1;        // H0: mean >= +margin (rejected: the mean is below +margin)
  double p = 1;              // TOST: max(p_lower, p_upper)
  double low = 0, high = 0;  // the (1 - 2 alpha) t-interval of the mean
};

// Throws std::invalid_argument for fewer than two differences, a non-finite one, a margin that is
// not positive and finite, or alpha outside (0, 0.5). With all differences equal the standard error
// is 0: each one-sided p is 0 when its null is false and 1 when it holds.
EquivalenceResult equivalence_test(std::span<const double> diffs, double margin, double alpha);

}  // namespace ncclbot
