#pragma once
// What one getCollInfo costs each rank in leader mode (docs/plugin.md "Rank consistency"), side by
// side with local mode measured the same way: `ranks` processes on loopback, rank 0 leading and the
// others following (one process, local agreement, for `ranks` = 1). Each times every call on its own
// with the steady clock (its own cost measured and taken off) and pauses after it, as a
// collective on the GPU gives the plugin time between calls, so a follower's windows arrive ahead
// of its calls as in a job; then counts its heap allocations in one more repetition.
#include <string>

namespace ncclbot::bench {

struct RoleCost {
  double median_ns = 0, min_ns = 0;  // wall time per call: median and least over the repetitions
  double allocations_per_call = 0;
};

struct PacedCaseResult {
  std::string policy;
  int ranks = 0;
  RoleCost rank0;     // the leader (with `ranks` = 1: the local process)
  RoleCost follower;  // the costliest follower's (by median); none with `ranks` = 1
  std::string error;  // why the case has no result; empty when it has one
};

// One live policy's case: `calls` getCollInfo calls `reps` times on every rank, a latency reported
// for each call after each repetition (as NCCL's proxy thread would, untimed). Forks before it loads
// the plugin at `plugin_path`, so call it before this process loads it. `pause_us`: the pause after
// each call (a sleep, which may last longer).
PacedCaseResult time_paced_case(const std::string& plugin_path, const std::string& policy, int ranks,
                                long calls, int reps, int pause_us);

}  // namespace ncclbot::bench
