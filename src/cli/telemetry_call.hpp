#pragma once
// `telemetry` as a library call (cli/replay_call.hpp has the pattern): a report of what the plugin
// did, from its decision logs (docs/ope.md), written into a folder; typed options in, the numbers
// and the paths out, no printing.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/block_bootstrap_options.hpp"

namespace ncclbot::cli {

struct TelemetryCallOptions {
  std::vector<std::string> logs;
  std::string out;  // the report folder (created)
  int resamples = 999;
  uint64_t seed = 0;
  double level = 0.95;
  BlockBootstrapOptions blocks;
  bool figures = true;   // draw the learning curves (python3)
  bool replace = false;  // take over a folder another command wrote
};

struct TelemetryCallResult {
  nlohmann::json telemetry;  // telemetry.json's content: every number with its interval
  std::string telemetry_json, report_md, report_html;  // the files written
  std::string behaviour;                               // the logged policy
  std::string figures_note;                            // why figures are missing, or empty
  size_t skipped_latencies = 0, overridden_calls = 0, symmetric_calls = 0;
};

// UsageError on a bad option or an output folder that is not ours to write; InputError on a bad
// log or a number that is not finite (nothing written then).
TelemetryCallResult telemetry_call(const TelemetryCallOptions& options);

// The JSON document `telemetry --json` prints: the paths written.
nlohmann::json telemetry_document(const TelemetryCallResult& result);

}  // namespace ncclbot::cli
