#pragma once
// Splitting a replay's work across processes (`--shard I/N`, MPI ranks). A work unit is one
// (policy config, context) pair replayed for every seed, in seed order, where it runs: the mean
// over seeds is then computed exactly as the single-process engine computes it, and the unit ->
// seed mapping (seed_base + s) and the replay id (replay/stream_id.hpp) never depend on N.
// Units are numbered in row-major (config, context) order and dealt like cards: shard I of N
// holds units I, I+N, I+2N, ... < U. The shards of any N hold every unit exactly once, and each
// gets its share of every policy config (configs differ several-fold in cost, so contiguous
// slices of whole configs would leave some shards idle while others work).
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

struct ShardUnits {
  size_t total = 0;  // U, the units of the whole job
  ShardSpec shard;
  size_t size() const {
    return total > size_t(shard.index) ? (total - size_t(shard.index) - 1) / size_t(shard.count) + 1 : 0;
  }
  size_t unit(size_t k) const { return size_t(shard.index) + k * size_t(shard.count); }  // k < size()
};

inline ShardUnits shard_units(size_t total_units, ShardSpec shard) {
  return {total_units, shard};
}

// Seed-averaged losses of a shard's units, in unit order; with job.keep_per_seed also every
// seed's losses, [unit][seed].
struct ReplaySlice {
  ShardUnits units;
  std::vector<double> online, final_loss;
  int seeds_kept = 0;  // job.seeds with keep_per_seed, else 0
  std::vector<double> online_per_seed, final_per_seed;
};

// Runs shard `shard` of `job`'s units (job.raw is not supported here: per-replay rows stay with
// unsharded runs). Each config's part of the shard runs as one engine job over its contexts, so
// the engine's thread pool or device is used as usual.
ReplaySlice run_replay_units(const ReplayJob& job, ShardSpec shard, ReplayBackend resolved);

}  // namespace ncclbot
