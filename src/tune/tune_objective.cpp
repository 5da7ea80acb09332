// The tune objective and the rule that picks a grid point by it: kept apart from the replay
// machinery of tune.cpp, so the study loader (and its fuzz target) need nothing else.
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/tune/tune.hpp"

namespace ncclbot {

TuneObjective parse_tune_objective(const std::string& text) {
  if (text == "mean") return TuneObjective::kMean;
  if (text == "p99") return TuneObjective::kP99;
  if (text == "above_10pct") return TuneObjective::kAbove10pct;
  throw UsageError("--objective: unknown objective '" + text + "' (valid: mean, p99, above_10pct)");
}

std::string_view tune_objective_name(TuneObjective objective) {
  switch (objective) {
    case TuneObjective::kP99:
      return "p99";
    case TuneObjective::kAbove10pct:
      return "above_10pct";
    default:
      return "mean";
  }
}

double objective_value(const LossSummary& s, TuneObjective objective) {
  switch (objective) {
    case TuneObjective::kP99:
      return s.p99;
    case TuneObjective::kAbove10pct:
      return double(s.above_10pct);
    default:
      return s.mean;
  }
}

int choose_grid_point(std::span<const LossSummary> points, TuneObjective objective) {
  int chosen = 0;
  for (int i = 1; i < int(points.size()); ++i) {
    const LossSummary& a = points[size_t(i)];
    const LossSummary& b = points[size_t(chosen)];
    const double oa = objective_value(a, objective), ob = objective_value(b, objective);
    if (oa < ob || (oa == ob && a.mean < b.mean)) chosen = i;
  }
  return chosen;
}

}  // namespace ncclbot
