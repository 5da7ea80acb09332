#pragma once
// The report `replay` prints, shared with `merge` and MPI rank 0 so that a sharded or
// multi-process run prints exactly what the single-process run prints.
#include <string>
#include <vector>

#include "ncclbot/replay/cpu_engine.hpp"

namespace ncclbot::cli {

struct ReplayReport {
  std::string backend;
  std::vector<std::string> policies;  // expanded config texts, in config order
  size_t contexts = 0;
  int seeds = 0, horizon = 0, delay = 0, window = 1, policy_start = 0;
  std::string as_deployed;           // --as-deployed mode, empty when not given
  std::vector<double> call_cost_us;  // per config, empty when no per-call cost was charged
};

// Human summary on stdout (stderr with `json`), then the JSON document on stdout with `json`.
void print_replay_report(const ReplayReport& report, const ReplayResults& results, bool json);

}  // namespace ncclbot::cli
