#pragma once
// The JSON forms of a loss summary, a spread over seeds and a config's metrics with their spread:
// what `replay`, `tune` and `merge` print, and what tune's choice file carries (read back by
// metrics_from_json bit for bit).
#include <nlohmann/json.hpp>

#include "ncclbot/stats/loss_summary.hpp"
#include "ncclbot/tune/tune.hpp"

namespace ncclbot {

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

// The inverse of metrics_json (doubles survive the JSON text bit for bit: nlohmann writes the
// shortest decimal that reads back to the same double), for tune's choice file.
inline MetricsWithSpread metrics_from_json(const nlohmann::json& j) {
  const auto spread = [](const nlohmann::json& s) {
    return SeedSpread{s.at("mean").get<double>(), s.at("sd").get<double>(), s.at("min").get<double>(),
                      s.at("max").get<double>()};
  };
  MetricsWithSpread m;
  m.summary = {j.at("mean").get<double>(), j.at("p99").get<double>(), j.at("max").get<double>(),
               j.at("above_10pct").get<long>()};
  const nlohmann::json& a = j.at("across_seeds");
  m.mean = spread(a.at("mean"));
  m.p99 = spread(a.at("p99"));
  m.max = spread(a.at("max"));
  m.above_10pct = spread(a.at("above_10pct"));
  return m;
}

}  // namespace ncclbot
