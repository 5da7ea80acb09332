#pragma once
// Paired sign-flip permutation test on per-unit differences d_i (e.g. loss of policy A minus loss
// of policy B in each scenario). Under H0 each d_i is symmetric about 0, so the null distribution
// of the statistic T = mean(d) is that of mean(s_i d_i) over sign vectors s in {+1,-1}^n.
//
// Matches scipy.stats.permutation_test((d,), np.mean, permutation_type="samples"):
//  - exact: all 2^n sign vectors, the identity included; p_greater = #{T* >= t} / 2^n;
//  - Monte Carlo: B random sign vectors; p = (#{T* >= t} + 1) / (B + 1), never 0
//    (Phipson & Smyth 2010);
//  - a null value within 100 eps |t| of t counts as a tie (as SciPy does), so differences that are
//    equal on paper but not in floating point do not flip the count;
//  - two-sided p = min(1, 2 min(p_less, p_greater)).
// Exact counting splits the units in two halves and counts pairs of half-sums with two pointers
// over sorted lists, so 2^30 sign vectors cost about 2 * 2^15 sums: exact is the default up to
// n = 30 (SciPy would sample there unless n_resamples >= 2^n).
#include <cstdint>
#include <span>

#include "ncclbot/stats/alternative.hpp"

namespace ncclbot {

enum class PermutationMethod { automatic, exact, monte_carlo };

struct SignFlipOptions {
  Alternative alternative = Alternative::two_sided;
  PermutationMethod method = PermutationMethod::automatic;
  uint64_t resamples = 9999;  // Monte Carlo sign vectors (also: exact when 2^n <= resamples, as SciPy)
  uint64_t seed = 0;          // see resample_stream.hpp for how it maps to random streams
  unsigned threads = 1;       // 0 = all cores; the result does not depend on it
};

inline constexpr int kSignFlipExactAutoMaxUnits = 30;  // automatic: exact up to this n
inline constexpr int kSignFlipExactMaxUnits = 40;      // largest n the exact method accepts

// The one rule for "enumerate or sample": exact when forced, or (automatic) when n <= 30 or
// 2^n <= resamples; Monte Carlo otherwise. Shared with the resolution floor, so the floor a report
// prints is the floor of the test it ran.
bool sign_flip_enumerates(uint64_t units, PermutationMethod method, uint64_t resamples);

struct SignFlipResult {
  double statistic = 0.0;  // mean of the differences
  double p_value = 1.0;
  bool exact = false;
  uint64_t sign_vectors = 0;   // 2^n when exact, else the number of random sign vectors drawn
  uint64_t count_greater = 0;  // #{T* >= t} (ties included), over the sign vectors above
  uint64_t count_less = 0;     // #{T* <= t}
};

// Throws std::invalid_argument for an empty or non-finite input, resamples == 0 on the Monte Carlo
// path, or n > kSignFlipExactMaxUnits with method exact.
SignFlipResult sign_flip_test(std::span<const double> diffs, const SignFlipOptions& options = {});

}  // namespace ncclbot
