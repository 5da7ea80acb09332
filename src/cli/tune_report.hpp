#pragma once
// The report `tune` prints, shared with `merge` of score-phase partials, so that a tune sharded
// over processes prints exactly what the single-process run prints.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/replay_setup_report.hpp"
#include "ncclbot/tune/tune.hpp"

namespace ncclbot::cli {

struct TuneReport : ReplaySetupReport {
  std::string objective;
  std::string tune_nodes, score_nodes;  // the options' text, as the user gave it
  size_t tune_contexts = 0, score_contexts = 0;
};

// The JSON document `tune --json` prints.
nlohmann::json tune_document(const TuneReport& report, const std::vector<TunedPolicy>& tuned);

// Human summary on stdout (stderr with `json`), then the JSON document on stdout with `json`.
void print_tune_report(const TuneReport& report, const std::vector<TunedPolicy>& tuned, bool json);

}  // namespace ncclbot::cli
