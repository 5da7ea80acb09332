#include "ncclbot/stats/binomial_test.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <stdexcept>

namespace ncclbot {
namespace {

struct Binomial {
  boost::math::binomial_distribution<double> dist;
  int64_t n;
  double pmf(int64_t x) const { return x < 0 || x > n ? 0.0 : boost::math::pdf(dist, double(x)); }
  double cdf(int64_t x) const { return x < 0 ? 0.0 : x >= n ? 1.0 : boost::math::cdf(dist, double(x)); }
  // P(X > x), from the complement so the upper tail keeps its precision.
  double sf(int64_t x) const {
    return x < 0 ? 1.0 : x >= n ? 0.0 : boost::math::cdf(boost::math::complement(dist, double(x)));
  }
};

// SciPy's _binary_search_for_binom_tst: the i in [lo, hi] with a(i) <= d < a(i+1) for an a that
// is increasing on [lo, hi].
template <class F>
int64_t binary_search(F a, double d, int64_t lo, int64_t hi) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const double midval = a(mid);
    if (midval < d)
      lo = mid + 1;
    else if (midval > d)
      hi = mid - 1;
    else
      return mid;
  }
  return a(lo) <= d ? lo : lo - 1;
}

}  // namespace

double binomial_test(int64_t k, int64_t n, double p, Alternative alternative) {
  if (n < 0 || k < 0 || k > n) throw std::invalid_argument("binomial test needs 0 <= k <= n");
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("binomial test needs p in [0, 1]");
  if (n == 0) return 1.0;
  const Binomial b{boost::math::binomial_distribution<double>(double(n), p), n};
  if (alternative == Alternative::less) return b.cdf(k);
  if (alternative == Alternative::greater) return b.sf(k - 1);
  const double d = b.pmf(k);
  const double rerr = 1.0 + 1e-7;
  const double expected = p * double(n);
  double pval;
  if (double(k) == expected) {
    pval = 1.0;
  } else if (double(k) < expected) {
    const int64_t ix =
        binary_search([&](int64_t x) { return -b.pmf(x); }, -d * rerr, int64_t(std::ceil(expected)), n);
    const int64_t y = n - ix + int64_t(d * rerr == b.pmf(ix));
    pval = b.cdf(k) + b.sf(n - y);
  } else {
    const int64_t ix =
        binary_search([&](int64_t x) { return b.pmf(x); }, d * rerr, 0, int64_t(std::floor(expected)));
    const int64_t y = ix + 1;
    pval = b.cdf(y - 1) + b.sf(k - 1);
  }
  return std::min(1.0, pval);
}

}  // namespace ncclbot
