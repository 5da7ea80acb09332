#include "report/number_format.hpp"

#include <fmt/format.h>
#include <cmath>

namespace ncclbot::report {

std::string percent(double f) {
  if (std::isnan(f)) return "n/a";
  return fmt::format("{:.2f}%", f * 100.0);
}

std::string p_value(double p) {
  if (std::isnan(p)) return "n/a";
  if (p >= 0.001) return fmt::format("{:.3g}", p);
  return fmt::format("{:.2e}", p);
}

std::string count(double x) {
  if (std::isnan(x)) return "n/a";
  if (x == std::floor(x) && std::fabs(x) < 1e15) return fmt::format("{}", static_cast<long long>(x));
  return fmt::format("{:.2f}", x);
}

std::string metric_text(const std::string& metric, double v) {
  return metric == "above_10pct" ? count(v) : percent(v);
}

std::string metric_diff_text(const std::string& metric, double d) {
  if (std::isnan(d)) return "n/a";
  if (metric == "above_10pct") return (d > 0 ? "+" : "") + count(d);
  return fmt::format("{:+.2f} pp", d * 100.0);
}

std::string metric_words(const std::string& m) {
  if (m == "mean") return "mean loss";
  if (m == "p99") return "p99 loss";
  return "contexts above 10% loss";
}

}  // namespace ncclbot::report
