#pragma once
// The four metrics reported for a set of per-context losses (docs/architecture.md "Metrics").
#include <span>

#include "ncclbot/stats/loss_threshold.hpp"

namespace ncclbot {

struct LossSummary {
  double mean = 0.0;
  double p99 = 0.0;  // linear-interpolation percentile (NumPy's default "linear" method)
  double max = 0.0;
  long above_10pct = 0;  // contexts whose loss is above 10% (loss_above, loss_threshold.hpp)
};

// Percentile q in [0,100] of `x` with linear interpolation between order statistics.
double percentile_linear(std::span<const double> x, double q);
// Quantile p in [0,1] of data already sorted ascending, same interpolation (NumPy/SciPy "linear",
// Hyndman-Fan type 7); no copy, so resampling code can call it in a loop.
double quantile_linear_sorted(std::span<const double> sorted, double p);
LossSummary summarize_losses(std::span<const double> losses);

}  // namespace ncclbot
