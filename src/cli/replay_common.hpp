#pragma once
// What `replay`, `tune`, `merge` and `bench` share on the command line: JSON forms of loss metrics.
#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/core/error.hpp"

#include "ncclbot/replay/tune.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot::cli {

// Caps of `replay` and `tune` (the same as a study file's): a typo such as --seeds 1000000000 is
// refused at once instead of running for days or exhausting memory with per-seed losses.
inline constexpr int kMaxReplaySeeds = 100'000;
inline constexpr int kMaxReplayHorizon = 100'000'000;

inline void check_replay_size(int seeds, int horizon) {
  if (seeds < 1 || seeds > kMaxReplaySeeds)
    throw UsageError("--seeds " + std::to_string(seeds) + ": must be in [1, " +
                     std::to_string(kMaxReplaySeeds) + "]");
  if (horizon < 1 || horizon > kMaxReplayHorizon)
    throw UsageError("--horizon " + std::to_string(horizon) + ": must be in [1, " +
                     std::to_string(kMaxReplayHorizon) + "]");
}

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

}  // namespace ncclbot::cli
