#include "ncclbot/stats/equivalence_test.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <stdexcept>

namespace ncclbot {
namespace {

// P(mean estimate this far above the null) for H0: mean <= null, by the t statistic with df.
double p_above(double mean, double null, double se, const boost::math::students_t_distribution<double>& t) {
  if (se == 0.0) return mean > null ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(t, (mean - null) / se));
}

}  // namespace

EquivalenceResult equivalence_test(std::span<const double> diffs, double margin, double alpha) {
  if (diffs.size() < 2) throw std::invalid_argument("equivalence test: needs at least two differences");
  if (!(margin > 0.0) || !std::isfinite(margin))
    throw std::invalid_argument("equivalence test: the margin must be positive and finite");
  if (!(alpha > 0.0 && alpha < 0.5))
    throw std::invalid_argument("equivalence test: alpha must be in (0, 0.5)");
  double sum = 0;
  for (double d : diffs) {
    if (!std::isfinite(d)) throw std::invalid_argument("equivalence test: a difference is not finite");
    sum += d;
  }
  const double n = double(diffs.size());
  EquivalenceResult r;
  r.mean = sum / n;
  double ss = 0;
  for (double d : diffs) ss += (d - r.mean) * (d - r.mean);
  r.standard_error = std::sqrt(ss / (n - 1.0) / n);
  r.df = int(diffs.size()) - 1;
  const boost::math::students_t_distribution<double> t(r.df);
  r.p_lower = p_above(r.mean, -margin, r.standard_error, t);
  r.p_upper = p_above(-r.mean, -margin, r.standard_error, t);  // mirrored: H0 mean >= margin
  r.p = std::max(r.p_lower, r.p_upper);
  const double half = boost::math::quantile(boost::math::complement(t, alpha)) * r.standard_error;
  r.low = r.mean - half;
  r.high = r.mean + half;
  return r;
}

}  // namespace ncclbot
