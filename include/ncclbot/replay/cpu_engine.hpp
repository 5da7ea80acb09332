#pragma once
// The CPU replay engine: every (policy config, context, seed) replay of replay/replay.hpp over a
// thread pool. A work item is one (config, context) pair replayed for all seeds in seed order and
// averaged there, so results are bit-identical for any thread count. Memory is bounded by the
// [config][context] aggregates (plus [config][seed][context] when per-seed losses are asked for);
// per-replay rows go to a stream, in a fixed order, only when one is given.
#include <cstdint>
#include <iosfwd>
#include <vector>

#include "ncclbot/core/replay_progress.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot {

struct ReplayJob {
  const Sweep* sweep = nullptr;
  std::vector<int> contexts;  // sweep context indices to replay
  std::vector<PolicySpec> configs;
  // Frozen decisions of supervised configs: fixed_slots[config] is empty or has one slot per sweep
  // context (-1 = none; the policy then falls back to AUTO).
  std::vector<std::vector<int>> fixed_slots;
  int seeds = 1;
  uint64_t seed_base = 0;  // replay seed of seed index s is seed_base + s
  int horizon = 1;
  int delay = 0;         // feedback delay D (replay/replay.hpp)
  int window = 1;        // decision window W (replay/replay.hpp): 1 = call t's latency reaches call t+D+1
  int policy_start = 0;  // calls of NCCL's own pick before the policy decides (replay/replay.hpp)
  // The policies' own per-call costs (replay/replay.hpp): call_cost_us[config] in microseconds,
  // >= 0; empty = none (every config free).
  std::vector<double> call_cost_us;
  // What watching a call costs as deployed (deployed/observation_cost.hpp): observation_cost[c] for
  // sweep context c, the fraction of a watched call's latency added (>= 0), charged to the configs
  // whose policy watches (policy_watches); empty = none.
  std::vector<double> observation_cost;
  int threads = 1;
  // Threads per block of the CUDA replay kernels (0: the engine's default, 128; fewer when the
  // state of that many does not fit shared memory). Results do not depend on it, only the speed.
  int device_block = 0;
  bool keep_per_seed = false;
  std::ostream* raw = nullptr;  // CSV rows config,policy,context,seed,online_loss,final_loss,final_slot
  ReplayProgress* progress = nullptr;  // told of every finished (config, context) unit, if set
};

struct ReplayResults {
  int num_configs = 0, num_contexts = 0, seeds = 0;
  // [config][i] for i indexing job.contexts: mean over seeds (summed in seed order).
  std::vector<double> online, final_loss;
  // [config][i]: the fraction of calls watched (replay/replay.hpp), mean over seeds.
  std::vector<double> watched;
  // [config][seed][i], only with keep_per_seed.
  std::vector<double> online_per_seed, final_per_seed;

  double online_at(int config, int i) const { return online[size_t(config) * num_contexts + i]; }
  double final_at(int config, int i) const { return final_loss[size_t(config) * num_contexts + i]; }
  double watched_at(int config, int i) const { return watched[size_t(config) * num_contexts + i]; }
  // Losses of one config over the contexts (seed-averaged), or of one seed.
  std::vector<double> online_of(int config) const;
  std::vector<double> final_of(int config) const;
  std::vector<double> watched_of(int config) const;  // empty when the engine kept none (merged shards)
  std::vector<double> online_of(int config, int seed) const;
  std::vector<double> final_of(int config, int seed) const;
};

// Throws UsageError for an empty config list, no contexts, seeds < 1 or horizon < 1.
ReplayResults run_cpu_replay(const ReplayJob& job);

// UsageError unless job.call_cost_us is empty or one finite cost >= 0 per config, and
// job.observation_cost empty or one finite fraction >= 0 per sweep context.
void check_call_costs(const ReplayJob& job);

// What every engine checks before it replays `job` (a UsageError naming the first problem): a sweep,
// configs, contexts in range, seeds and horizon >= 1, a feedback schedule the delayed cursor holds,
// a policy start >= 0 and the per-call costs (check_call_costs).
void check_replay_job(const ReplayJob& job);

struct ReplayTask;  // replay/replay.hpp

// What watching a call of config `config` on sweep context `context` costs (ReplayTask::observation_cost):
// job.observation_cost[context] when the config's policy watches, else 0.
double observation_cost_of(const ReplayJob& job, size_t config, int context);

// The replay of config `config` on job.contexts[index] (Philox subsequence `stream_id`), every field
// from the job but the seed and the engine's aids.
ReplayTask replay_task_of(const ReplayJob& job, size_t config, size_t index, uint64_t stream_id);

// The replay id of a sweep context (replay/stream_id.hpp).
uint64_t context_stream_id(const Context& c);

// The replay id of each of job.contexts.
std::vector<uint64_t> job_stream_ids(const ReplayJob& job);

}  // namespace ncclbot
