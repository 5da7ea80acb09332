#pragma once
// Wilcoxon signed-rank test on paired differences, computed as scipy.stats.wilcoxon (SciPy 1.17):
// rank |d| with mid-ranks for ties; W+ = sum of the ranks of the positive differences.
//
// Zero differences (zero_method, SciPy's names):
//  - "wilcox" (the default, as in SciPy): zeros are dropped before ranking;
//  - "pratt": zeros are ranked with the rest, then their ranks are dropped (R coin's default).
//
// Method:
//  - "exact": the exact null distribution of W+ for the ranks 1..n' (n' = ranked count); exact only
//    without ties or zeros; with them W+ may be fractional, rounded up for "less" and down for
//    "greater" (conservative, as SciPy);
//  - "approx": normal approximation, mean n'(n'+1)/4 (Pratt: minus z(z+1)/4 for z zeros), variance
//    [n'(n'+1)(2n'+1) - z(z+1)(2z+1) - sum(t^3 - t)/2] / 24 with t the tie-group sizes (zeros'
//    group excluded), optional continuity correction (off by default, as SciPy);
//  - "auto" (SciPy's rule): more than 50 differences -> approx; no ties and no zeros -> exact;
//    otherwise up to 13 differences -> the exact sign-flip permutation distribution of W+ (all 2^n
//    sign vectors, ties and zeros accounted for); otherwise approx.
#include <span>
#include <string>
#include <string_view>

#include "ncclbot/stats/alternative.hpp"

namespace ncclbot {

enum class ZeroMethod { wilcox, pratt };
enum class WilcoxonMethod { automatic, exact, approx };

ZeroMethod parse_zero_method(std::string_view text);          // "wilcox" | "pratt"
WilcoxonMethod parse_wilcoxon_method(std::string_view text);  // "auto" | "exact" | "approx"
std::string to_string(ZeroMethod z);

inline constexpr long kWilcoxonExactMaxRanked = 2000;  // largest n' the exact method accepts

struct WilcoxonOptions {
  Alternative alternative = Alternative::two_sided;
  ZeroMethod zero_method = ZeroMethod::wilcox;
  WilcoxonMethod method = WilcoxonMethod::automatic;
  bool continuity = false;  // approx only
};

struct WilcoxonResult {
  double statistic = 0.0;  // SciPy's: min(W+, W-) for two-sided, W+ otherwise
  double r_plus = 0.0, r_minus = 0.0;
  double p_value = 1.0;
  double z = 0.0;           // approx only (NaN otherwise); SciPy reports -|z| for two-sided
  std::string method_used;  // "exact", "permutation" or "approx"
  long n = 0, zeros = 0;    // differences given, of which zero
  bool ties = false;        // tied nonzero |d|
};

// Throws std::invalid_argument for an empty or non-finite input, when no difference is left to rank,
// or for method exact with more than kWilcoxonExactMaxRanked ranked differences.
WilcoxonResult wilcoxon_signed_rank(std::span<const double> diffs, const WilcoxonOptions& options = {});

}  // namespace ncclbot
