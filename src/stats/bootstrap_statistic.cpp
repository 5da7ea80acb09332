#include "ncclbot/stats/bootstrap_statistic.hpp"

#include <algorithm>
#include <stdexcept>

#include "ncclbot/core/error.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot {

BootstrapStatistic parse_bootstrap_statistic(std::string_view text) {
  if (text == "mean") return BootstrapStatistic::mean;
  if (text == "p99") return BootstrapStatistic::p99;
  if (text == "max") return BootstrapStatistic::max;
  if (text == "count_above") return BootstrapStatistic::count_above;
  throw UsageError("statistic must be \"mean\", \"p99\", \"max\" or \"count_above\", not \"" +
                   std::string(text) + "\"");
}

std::string to_string(BootstrapStatistic s) {
  switch (s) {
    case BootstrapStatistic::p99:
      return "p99";
    case BootstrapStatistic::max:
      return "max";
    case BootstrapStatistic::count_above:
      return "count_above";
    default:
      return "mean";
  }
}

double evaluate_statistic(BootstrapStatistic s, std::span<const double> x, double threshold) {
  if (x.empty()) throw std::invalid_argument("statistic of an empty set");
  switch (s) {
    case BootstrapStatistic::mean: {
      double sum = 0.0;
      for (double v : x) sum += v;
      return sum / double(x.size());
    }
    case BootstrapStatistic::p99:
      return percentile_linear(x, 99.0);
    case BootstrapStatistic::max:
      return *std::max_element(x.begin(), x.end());
    case BootstrapStatistic::count_above:
      return double(std::count_if(x.begin(), x.end(), [&](double v) { return loss_above(v, threshold); }));
  }
  return 0.0;
}

}  // namespace ncclbot
