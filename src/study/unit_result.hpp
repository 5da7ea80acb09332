#pragma once
// One unit of study work: a policy tuned on a scenario's tune contexts and, frozen, scored on its
// score contexts. Units are checkpointed one file each (DIR/units/), so a killed run resumes
// from the completed ones; the report is always built from the files, never from memory, so a
// resumed run and an uninterrupted one produce the same bytes.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot::study {

struct GridPointResult {
  std::string config;
  LossSummary tune;  // over the tune contexts, of the study's loss kind
};

struct CurvePoint {
  int horizon = 0;
  double mean_online = 0;  // mean online loss over the score contexts
};

// A conservative policy's promise (policy/conservative.hpp) checked on the unit's score contexts
// (replay/budget_check.hpp): at every call, cumulative mean latency at most (1 + alpha) times NCCL's
// default's. Per (context, seed) replay; a seed is broken when any of its contexts broke.
struct PromiseCheck {
  double alpha = 0.0;
  int contexts = 0, seeds = 0, horizon = 0;
  int64_t replays_broken = 0, seeds_broken = 0;
  int64_t first_break_call = 0;  // 1-based, 0 when none broke
  bool operator==(const PromiseCheck&) const = default;
};

struct UnitResult {
  std::string scenario, policy, spec;
  std::string inputs_sha256;  // digest of everything the unit depends on; a mismatch means recompute
  std::vector<GridPointResult> grid;
  int chosen = 0;  // index into grid
  // Per score context, in the scenario's score-context order.
  std::vector<double> online, final_loss;
  std::vector<int> final_slot;
  std::vector<double> watched;  // the fraction of calls watched (replay/replay.hpp), per score context
  std::vector<CurvePoint> curve;
  // Over the study's loss_vs_horizon contexts and seeds (StudySpec::loss_vs_horizon).
  std::vector<CurvePoint> loss_vs_horizon;
  // For a policy run @conservative when the study asks (StudySpec::promise_seeds > 0).
  std::optional<PromiseCheck> promise;

  const std::string& chosen_config() const { return grid.at(size_t(chosen)).config; }
};

nlohmann::json to_json(const PromiseCheck& p);
PromiseCheck promise_from_json(const nlohmann::json& j);  // throws nlohmann's exceptions when malformed
nlohmann::json to_json(const UnitResult& u);
// Throws std::runtime_error on a malformed document (a checkpoint is then recomputed).
UnitResult unit_from_json(const nlohmann::json& j);

// A file name for a unit that is safe on every file system and unique per (scenario, policy).
std::string unit_file_name(const std::string& scenario, const std::string& policy);

}  // namespace ncclbot::study
