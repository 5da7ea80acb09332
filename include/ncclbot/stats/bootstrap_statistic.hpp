#pragma once
// The metrics a report bootstraps over contexts (DESIGN.md "Metrics"): mean loss, p99 (linear
// interpolation, NumPy's default), max, and the number of contexts whose loss exceeds a threshold.
#include <span>
#include <string>
#include <string_view>

namespace ncclbot {

enum class BootstrapStatistic { mean, p99, max, count_above };

// "mean" | "p99" | "max" | "count_above"; throws UsageError otherwise.
BootstrapStatistic parse_bootstrap_statistic(std::string_view text);
std::string to_string(BootstrapStatistic s);

// The statistic of `x` (non-empty). count_above counts x_i > threshold and returns it as a double.
double evaluate_statistic(BootstrapStatistic s, std::span<const double> x, double threshold);

}  // namespace ncclbot
