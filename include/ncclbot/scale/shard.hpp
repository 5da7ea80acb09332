#pragma once
// Splitting a replay's work across processes (`--shard I/N`, MPI ranks). A work unit is one
// (policy config, context) pair replayed for every seed, in seed order, where it runs: the mean
// over seeds is then computed exactly as the single-process engine computes it, and the unit ->
// seed mapping (seed_base + s) and the replay id (replay/stream_id.hpp) never depend on N.
// Units are numbered in row-major (config, context) order and dealt like cards: shard I of N
// holds units I, I+N, I+2N, ... < U. The shards of any N hold every unit exactly once, and each
// gets its share of every policy config (configs differ several-fold in cost, so contiguous
// slices of whole configs would leave some shards idle while others work).
// A sweep with a first-use cost couples the contexts of a communicator (replay/first_use.hpp): its
// units are then dealt in blocks, one block per (config, communicator) in row-major order, block
// I, I+N, ... to shard I, so each shard replays whole communicators and nothing twice.
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
  bool listed = false;        // dealt in blocks: the shard's units are `units`
  std::vector<size_t> units;  // ascending, when listed
  size_t size() const {
    if (listed) return units.size();
    return total > size_t(shard.index) ? (total - size_t(shard.index) - 1) / size_t(shard.count) + 1 : 0;
  }
  size_t unit(size_t k) const {  // k < size()
    return listed ? units[k] : size_t(shard.index) + k * size_t(shard.count);
  }
};

// Units dealt one by one.
inline ShardUnits shard_units(size_t total_units, ShardSpec shard) {
  return {total_units, shard, false, {}};
}

// Units of `configs` configs over `contexts` job contexts dealt in (config, communicator) blocks;
// `communicators` lists each communicator's job-context indices and covers every context once.
ShardUnits communicator_shard_units(size_t configs, size_t contexts,
                                    const std::vector<std::vector<int>>& communicators, ShardSpec shard);

// The communicators of a job whose sweep has a first-use cost (their job-context indices, in call
// order), else none: what block dealing uses, and what a partial's identity records.
std::vector<std::vector<int>> coupled_communicators(const ReplayJob& job);

// The job's units in `shard`: in blocks for coupled_communicators(), else one by one.
ShardUnits job_shard_units(const ReplayJob& job, ShardSpec shard);

// Seed-averaged losses of a shard's units, in unit order; with job.keep_per_seed also every
// seed's losses, [unit][seed].
struct ReplaySlice {
  ShardUnits units;
  std::vector<double> online, final_loss;
  std::vector<double> watched;  // the fraction of calls watched, per unit
  int seeds_kept = 0;           // job.seeds with keep_per_seed, else 0
  std::vector<double> online_per_seed, final_per_seed;
};

// Runs shard `shard` of `job`'s units (job.raw is not supported here: per-replay rows stay with
// unsharded runs). Each config's part of the shard runs as one engine job over its contexts, so
// the engine's thread pool or device is used as usual.
ReplaySlice run_replay_units(const ReplayJob& job, ShardSpec shard, ReplayBackend resolved);

}  // namespace ncclbot
