#pragma once
// What `replay`, `tune` and `bench` share on the command line: JSON forms of loss metrics.
#include <nlohmann/json.hpp>

#include "ncclbot/replay/tune.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot::cli {

inline nlohmann::json loss_summary_json(const LossSummary& s) {
  return {{"mean", s.mean}, {"p99", s.p99}, {"max", s.max}, {"above_10pct", s.above_10pct}};
}

inline nlohmann::json seed_spread_json(const SeedSpread& s) {
  return {{"mean", s.mean}, {"sd", s.sd}, {"min", s.min}, {"max", s.max}};
}

inline nlohmann::json metrics_json(const MetricsWithSpread& m) {
  nlohmann::json j = loss_summary_json(m.summary);
  j["across_seeds"] = {{"mean", seed_spread_json(m.mean)},
                       {"p99", seed_spread_json(m.p99)},
                       {"max", seed_spread_json(m.max)},
                       {"above_10pct", seed_spread_json(m.above_10pct)}};
  return j;
}

}  // namespace ncclbot::cli
