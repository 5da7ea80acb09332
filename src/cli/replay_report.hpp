#pragma once
// The report `replay` prints, shared with `merge` and MPI rank 0 so that a sharded or
// multi-process run prints exactly what the single-process run prints.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/replay_setup_report.hpp"
#include "ncclbot/replay/budget_check.hpp"
#include "ncclbot/replay/cpu_engine.hpp"

namespace ncclbot::cli {

struct ReplayReport : ReplaySetupReport {
  std::vector<std::string> policies;  // expanded config texts, in config order
  size_t contexts = 0;
  // With --budget ALPHA: each config's replays checked against 1 + alpha times NCCL's default
  // (replay/budget_check.hpp).
  std::optional<double> budget_alpha;
  BudgetCheck budget;
};

// The JSON document `replay --json` prints.
nlohmann::json replay_document(const ReplayReport& report, const ReplayResults& results);

// Human summary on stdout (stderr with `json`), then the JSON document on stdout with `json`.
void print_replay_report(const ReplayReport& report, const ReplayResults& results, bool json);

}  // namespace ncclbot::cli
