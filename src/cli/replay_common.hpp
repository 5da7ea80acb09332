#pragma once
// What `replay`, `tune`, `merge` and `bench` share on the command line: the caps on a replay's size,
// and the JSON forms of loss metrics (scale/metrics_json.hpp).
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/scale/metrics_json.hpp"

namespace ncclbot::cli {

// Caps of `replay` and `tune` (the same as a study file's): a typo such as --seeds 1000000000 is
// refused at once instead of running for days or exhausting memory with per-seed losses.
inline constexpr int kMaxReplaySeeds = 100'000;
inline constexpr int kMaxReplayHorizon = 100'000'000;

// Worker threads: `threads` when given (> 0), else the node's cores shared by its `ranks_per_node`
// processes.
inline int replay_threads(int threads, int ranks_per_node) {
  return threads > 0 ? threads : std::max(1, default_thread_count() / std::max(1, ranks_per_node));
}

inline void check_replay_size(int seeds, int horizon) {
  if (seeds < 1 || seeds > kMaxReplaySeeds)
    throw UsageError("--seeds " + std::to_string(seeds) + ": must be in [1, " +
                     std::to_string(kMaxReplaySeeds) + "]");
  if (horizon < 1 || horizon > kMaxReplayHorizon)
    throw UsageError("--horizon " + std::to_string(horizon) + ": must be in [1, " +
                     std::to_string(kMaxReplayHorizon) + "]");
}

}  // namespace ncclbot::cli
