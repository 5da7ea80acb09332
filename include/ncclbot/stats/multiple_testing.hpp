#pragma once
// Family-wise error control over the whole family of hypotheses actually tested.
//
// Holm (1979) step-down: sort the m non-NaN p-values p_(1) <= ... <= p_(m); the adjusted value is
// min(1, max_{j<=i} (m-j+1) p_(j)). The running max keeps adjusted values monotone in the raw ones,
// exactly as statsmodels `multipletests(method="holm")` and R `p.adjust(method="holm")` compute it.
// NaN marks a hypothesis that was not tested: it stays NaN and does not count towards m (as R does).
#include <span>
#include <vector>

namespace ncclbot {

// Adjusted p-values in the input order. Inputs must be in [0,1] or NaN (std::invalid_argument otherwise).
std::vector<double> holm_adjust(std::span<const double> p);

// min(1, m p) with m the number of non-NaN inputs; NaN stays NaN.
std::vector<double> bonferroni_adjust(std::span<const double> p);

// The number of non-NaN p-values: the family size m both adjustments use.
long family_size(std::span<const double> p);

}  // namespace ncclbot
