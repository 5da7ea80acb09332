#pragma once
// The metrics a report bootstraps over contexts (docs/architecture.md "Metrics"): mean loss, p99 (linear
// interpolation, NumPy's default), max, and the number of contexts whose loss exceeds a threshold.
#include <span>
#include <string>
#include <string_view>

#include "ncclbot/stats/loss_threshold.hpp"

namespace ncclbot {

enum class BootstrapStatistic { mean, p99, max, count_above };

// "mean" | "p99" | "max" | "count_above"; throws UsageError otherwise.
BootstrapStatistic parse_bootstrap_statistic(std::string_view text);
std::string to_string(BootstrapStatistic s);

// The statistic of `x` (non-empty). count_above counts loss_above(x_i, threshold) (1 + x_i > 1 + threshold,
// loss_threshold.hpp) and returns it as a double.
double evaluate_statistic(BootstrapStatistic s, std::span<const double> x, double threshold);

}  // namespace ncclbot
