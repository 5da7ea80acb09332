#pragma once
// The report `replay` prints, shared with `merge` and MPI rank 0 so that a sharded or
// multi-process run prints exactly what the single-process run prints.
#include <string>
#include <vector>

#include "cli/replay_setup_report.hpp"
#include "ncclbot/replay/cpu_engine.hpp"

namespace ncclbot::cli {

struct ReplayReport : ReplaySetupReport {
  std::vector<std::string> policies;  // expanded config texts, in config order
  size_t contexts = 0;
};

// Human summary on stdout (stderr with `json`), then the JSON document on stdout with `json`.
void print_replay_report(const ReplayReport& report, const ReplayResults& results, bool json);

}  // namespace ncclbot::cli
