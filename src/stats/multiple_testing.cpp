#include "ncclbot/stats/multiple_testing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ncclbot {
namespace {

void check_p_values(std::span<const double> p) {
  for (double v : p)
    if (!std::isnan(v) && !(v >= 0.0 && v <= 1.0))
      throw std::invalid_argument("p-values must lie in [0, 1] (or be NaN for an untested hypothesis)");
}

}  // namespace

long family_size(std::span<const double> p) {
  return long(std::count_if(p.begin(), p.end(), [](double v) { return !std::isnan(v); }));
}

std::vector<double> holm_adjust(std::span<const double> p) {
  check_p_values(p);
  std::vector<size_t> order;
  for (size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i])) order.push_back(i);
  // Ties may come in any order: tied p-values get the same adjusted value either way.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> out(p.size(), std::nan(""));
  const size_t m = order.size();
  double running_max = 0.0;
  for (size_t i = 0; i < m; ++i) {
    // Same operation order as statsmodels: multiply by (m - i), then the running maximum, then the cap.
    running_max = std::max(running_max, p[order[i]] * double(m - i));
    out[order[i]] = std::min(1.0, running_max);
  }
  return out;
}

std::vector<double> bonferroni_adjust(std::span<const double> p) {
  check_p_values(p);
  const double m = double(family_size(p));
  std::vector<double> out(p.size());
  for (size_t i = 0; i < p.size(); ++i) out[i] = std::isnan(p[i]) ? p[i] : std::min(1.0, p[i] * m);
  return out;
}

}  // namespace ncclbot
