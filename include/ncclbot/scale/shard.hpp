#pragma once
// Splitting a replay's work across processes (`--shard I/N`, MPI ranks). A work unit is one
// (policy config, context) pair replayed for every seed, in seed order, where it runs: the mean
// over seeds is then computed exactly as the single-process engine computes it, and the unit ->
// seed mapping (seed_base + s) and the replay id (replay/stream_id.hpp) never depend on N.
// Units are numbered in row-major (config, context) order and shard I of N takes the contiguous
// range [floor(U*I/N), floor(U*(I+1)/N)), so the shards of any N tile the units exactly once and
// concatenating them in shard order gives the unsharded order.
#include <cstddef>
#include <string>
#include <vector>

#include "ncclbot/replay/backend.hpp"

namespace ncclbot {

struct ShardSpec {
  int index = 0;  // I, 0 <= I < N
  int count = 1;  // N >= 1
};

// "I/N" with 0 <= I < N; throws UsageError naming `option` otherwise.
ShardSpec parse_shard(const std::string& text, const std::string& option = "--shard");

struct UnitRange {
  size_t begin = 0, end = 0;  // [begin, end)
  size_t size() const { return end - begin; }
};

UnitRange shard_units(size_t total_units, ShardSpec shard);

// Seed-averaged losses of a contiguous range of units, in unit order; with job.keep_per_seed also
// every seed's losses, [unit][seed].
struct ReplaySlice {
  UnitRange units;
  std::vector<double> online, final_loss;
  int seeds_kept = 0;  // job.seeds with keep_per_seed, else 0
  std::vector<double> online_per_seed, final_per_seed;
};

// Runs units `range` of `job` (job.raw is not supported here: per-replay rows stay with unsharded
// runs). Each config's part of the range runs as one engine job over its contexts, so the
// engine's thread pool or device is used as usual.
ReplaySlice run_replay_units(const ReplayJob& job, UnitRange range, ReplayBackend resolved);

}  // namespace ncclbot
