#pragma once
// Exact binomial test (the sign test when p = 0.5), computed as scipy.stats.binomtest does: one-sided
// tails from the Boost.Math binomial CDF; two-sided sums the probabilities of all outcomes no more
// likely than the observed one (with SciPy's 1e-7 relative slack, so equal probabilities that differ
// by rounding still count).
#include <cstdint>

#include "ncclbot/stats/alternative.hpp"

namespace ncclbot {

// k successes out of n trials, success probability p under H0. Throws std::invalid_argument for
// k > n or p outside [0, 1]. n = 0 gives p-value 1.
double binomial_test(int64_t k, int64_t n, double p = 0.5, Alternative alternative = Alternative::two_sided);

}  // namespace ncclbot
