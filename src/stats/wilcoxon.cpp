#include "ncclbot/stats/wilcoxon.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/stats/normal_distribution.hpp"
#include "ncclbot/stats/sign_flip_test.hpp"

namespace ncclbot {

ZeroMethod parse_zero_method(std::string_view text) {
  if (text == "wilcox") return ZeroMethod::wilcox;
  if (text == "pratt") return ZeroMethod::pratt;
  throw UsageError("zero_method must be \"wilcox\" or \"pratt\", not \"" + std::string(text) + "\"");
}

WilcoxonMethod parse_wilcoxon_method(std::string_view text) {
  if (text == "auto") return WilcoxonMethod::automatic;
  if (text == "exact") return WilcoxonMethod::exact;
  if (text == "approx" || text == "asymptotic") return WilcoxonMethod::approx;
  throw UsageError("method must be \"auto\", \"exact\" or \"approx\", not \"" + std::string(text) + "\"");
}

std::string to_string(ZeroMethod z) {
  return z == ZeroMethod::pratt ? "pratt" : "wilcox";
}

namespace {

// Null distribution of W+ for ranks 1..n, built as SciPy's _get_wilcoxon_distr does (halving and
// shifting), so probabilities round the same way.
std::vector<double> wilcoxon_null_pmf(long n) {
  std::vector<double> c{1.0};
  for (long k = 1; k <= n; ++k) {
    std::vector<double> next(size_t(k * (k + 1) / 2 + 1), 0.0);
    const size_t m = c.size();
    for (size_t i = 0; i < m; ++i) next[i] = c[i] * 0.5;
    for (size_t i = 0; i < m; ++i) next[next.size() - m + i] += c[i] * 0.5;
    c = std::move(next);
  }
  return c;
}

// SciPy's WilcoxonDistribution: sum the shorter tail, use the complement for the other.
struct WilcoxonNull {
  std::vector<double> pmf;
  double mean;
  explicit WilcoxonNull(long n) : pmf(wilcoxon_null_pmf(n)), mean(double(n) * double(n + 1) / 4.0) {}
  double sum_range(long lo, long hi) const {  // sum of pmf[lo..hi], clipped to the support
    lo = std::max(lo, 0L);
    hi = std::min(hi, long(pmf.size()) - 1);
    double s = 0.0;
    for (long i = lo; i <= hi; ++i) s += pmf[size_t(i)];
    return s;
  }
  double cdf(long k) const { return double(k) <= mean ? lower_sum(k) : 1.0 - upper_sum(k + 1); }
  double sf(long k) const { return double(k) <= mean ? upper_sum(k) : 1.0 - lower_sum(k - 1); }
  double lower_sum(long k) const { return sum_range(0, k); }                     // P(W+ <= k)
  double upper_sum(long k) const { return sum_range(k, long(pmf.size()) - 1); }  // P(W+ >= k)
};

// Mid-ranks of |d| over the ranked units (sorted here by |d|, ties sharing their average rank);
// adds sum(t^3 - t) over tied nonzero groups to tie_correction and sets r.ties when one has t > 1.
std::vector<double> wilcoxon_mid_ranks(std::span<const double> d, std::vector<size_t>& ranked,
                                       WilcoxonResult& r, double& tie_correction) {
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](size_t a, size_t b) { return std::abs(d[a]) < std::abs(d[b]); });
  std::vector<double> rank(d.size(), 0.0);
  for (size_t g = 0; g < ranked.size();) {
    size_t h = g;
    while (h + 1 < ranked.size() && std::abs(d[ranked[h + 1]]) == std::abs(d[ranked[g]])) ++h;
    const double mid = (double(g + 1) + double(h + 1)) / 2.0;
    for (size_t i = g; i <= h; ++i) rank[ranked[i]] = mid;
    const double t = double(h - g + 1);
    const bool zero_group = d[ranked[g]] == 0.0;  // Pratt: the zeros' group is not a tie correction
    if (!zero_group) {
      tie_correction += t * t * t - t;
      if (t > 1) r.ties = true;
    }
    g = h + 1;
  }
  return rank;
}

// The method "auto" resolves to, as SciPy picks it; sets permutation (leaving the method as it is)
// for small samples with ties or zeros, where the exact null distribution does not apply.
WilcoxonMethod resolve_wilcoxon_method(const WilcoxonOptions& opt, const WilcoxonResult& r,
                                       bool& permutation) {
  WilcoxonMethod method = opt.method;
  if (method == WilcoxonMethod::automatic) {
    if (r.n > 50)
      method = WilcoxonMethod::approx;
    else if (!r.ties && r.zeros == 0)
      method = WilcoxonMethod::exact;
    else if (r.n <= 13)
      permutation = true;
    else
      method = WilcoxonMethod::approx;
  }
  return method;
}

// p-value by an exact sign-flip test of the signed ranks.
void wilcoxon_permutation_p_value(std::span<const double> d, const std::vector<double>& rank,
                                  const WilcoxonOptions& opt, WilcoxonResult& r) {
  // W+ = (sum of s_i rank_i + sum of ranks) / 2 over ranked nonzero units: a sign-flip test of the
  // signed ranks is a test of W+ (all 2^n sign vectors; zeros never change the statistic).
  std::vector<double> signed_ranks(d.size());
  for (size_t i = 0; i < d.size(); ++i) signed_ranks[i] = d[i] > 0 ? rank[i] : d[i] < 0 ? -rank[i] : 0.0;
  SignFlipOptions so;
  so.alternative = opt.alternative;
  so.method = PermutationMethod::exact;
  r.p_value = sign_flip_test(signed_ranks, so).p_value;
  r.method_used = "permutation";
}

// p-value of r.r_plus from the exact null distribution of W+ over `count` ranks.
void wilcoxon_exact_p_value(long count, const WilcoxonOptions& opt, WilcoxonResult& r) {
  // The null distribution costs O(count^3) to build; beyond this the normal approximation is exact
  // to many digits anyway.
  if (count > kWilcoxonExactMaxRanked)
    throw std::invalid_argument("exact Wilcoxon supports at most " + std::to_string(kWilcoxonExactMaxRanked) +
                                " ranked differences; use the normal approximation");
  const WilcoxonNull null(count);
  const long up = long(std::ceil(r.r_plus)), down = long(std::floor(r.r_plus));
  if (opt.alternative == Alternative::less)
    r.p_value = null.cdf(up);
  else if (opt.alternative == Alternative::greater)
    r.p_value = null.sf(down);
  else
    r.p_value = std::clamp(2.0 * std::min(null.sf(down), null.cdf(up)), 0.0, 1.0);
  r.method_used = "exact";
}

// p-value and z of r.r_plus by the normal approximation with mean mn and standard error se.
void wilcoxon_normal_p_value(double mn, double se, const WilcoxonOptions& opt, WilcoxonResult& r) {
  double z = (r.r_plus - mn) / se;
  if (opt.continuity) {
    const double sign = opt.alternative == Alternative::greater ? 1.0
                        : opt.alternative == Alternative::less  ? -1.0
                                                                : (z > 0) - (z < 0);
    z -= sign * 0.5 / se;
  }
  r.p_value = opt.alternative == Alternative::less      ? normal_cdf(z)
              : opt.alternative == Alternative::greater ? normal_sf(z)
                                                        : 2.0 * normal_sf(std::abs(z));
  r.z = opt.alternative == Alternative::two_sided ? -std::abs(z) : z;
  r.method_used = "approx";
}

}  // namespace

WilcoxonResult wilcoxon_signed_rank(std::span<const double> d, const WilcoxonOptions& opt) {
  if (d.empty()) throw std::invalid_argument("the Wilcoxon test needs at least one difference");
  for (double v : d)
    if (!std::isfinite(v)) throw std::invalid_argument("differences must be finite numbers");
  WilcoxonResult r;
  r.n = long(d.size());
  r.zeros = long(std::count(d.begin(), d.end(), 0.0));

  // Units that get a rank: all of them for Pratt, the nonzero ones for Wilcox.
  std::vector<size_t> ranked;
  for (size_t i = 0; i < d.size(); ++i)
    if (opt.zero_method == ZeroMethod::pratt || d[i] != 0.0) ranked.push_back(i);
  const long count = long(ranked.size());
  if (count == 0 || r.zeros == r.n)
    throw std::invalid_argument("every difference is zero: the Wilcoxon signed-rank test is undefined");
  double tie_correction = 0.0;
  const std::vector<double> rank = wilcoxon_mid_ranks(d, ranked, r, tie_correction);
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] > 0) r.r_plus += rank[i];
    if (d[i] < 0) r.r_minus += rank[i];
  }

  const double cnt = double(count), nz = double(r.zeros);
  double mn = cnt * (cnt + 1.0) * 0.25;
  double se = cnt * (cnt + 1.0) * (2.0 * cnt + 1.0);
  if (opt.zero_method == ZeroMethod::pratt) {
    mn -= nz * (nz + 1.0) * 0.25;
    se -= nz * (nz + 1.0) * (2.0 * nz + 1.0);
  }
  se = std::sqrt((se - tie_correction / 2.0) / 24.0);

  bool permutation = false;
  const WilcoxonMethod method = resolve_wilcoxon_method(opt, r, permutation);

  r.z = std::numeric_limits<double>::quiet_NaN();
  if (permutation)
    wilcoxon_permutation_p_value(d, rank, opt, r);
  else if (method == WilcoxonMethod::exact)
    wilcoxon_exact_p_value(count, opt, r);
  else
    wilcoxon_normal_p_value(mn, se, opt, r);
  r.statistic = opt.alternative == Alternative::two_sided ? std::min(r.r_plus, r.r_minus) : r.r_plus;
  return r;
}

}  // namespace ncclbot
