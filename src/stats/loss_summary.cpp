#include "ncclbot/stats/loss_summary.hpp"
#include "ncclbot/stats/loss_threshold.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace ncclbot {

double percentile_linear(std::span<const double> x, double q) {
  if (x.empty()) throw std::invalid_argument("percentile of an empty set");
  std::vector<double> s(x.begin(), x.end());
  std::sort(s.begin(), s.end());
  return quantile_linear_sorted(s, q / 100.0);
}

double quantile_linear_sorted(std::span<const double> s, double p) {
  if (s.empty()) throw std::invalid_argument("quantile of an empty set");
  const double pos = p * double(s.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - double(lo);
  return s[lo] + (s[hi] - s[lo]) * frac;
}

LossSummary summarize_losses(std::span<const double> losses) {
  LossSummary out;
  if (losses.empty()) return out;
  double sum = 0.0;
  for (double l : losses) {
    sum += l;
    out.max = std::max(out.max, l);
    if (loss_above(l)) ++out.above_10pct;
  }
  out.mean = sum / double(losses.size());
  out.p99 = percentile_linear(losses, 99.0);
  return out;
}

}  // namespace ncclbot
