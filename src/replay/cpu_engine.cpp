#include "ncclbot/replay/cpu_engine.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/replay/communicators.hpp"
#include "ncclbot/replay/exploration_table.hpp"
#include "ncclbot/replay/policy_for_view.hpp"
#include "ncclbot/replay/replay_batch.hpp"
#include "ncclbot/replay/stream_id.hpp"

namespace ncclbot {

uint64_t context_stream_id(const Context& c) {
  return replay_stream_id(int(c.collective), c.nodes, c.gpus_per_node, c.bytes);
}

std::vector<uint64_t> job_stream_ids(const ReplayJob& job) {
  std::vector<uint64_t> ids;
  ids.reserve(job.contexts.size());
  for (int c : job.contexts) ids.push_back(context_stream_id(job.sweep->context(c)));
  return ids;
}

namespace {

// Per-replay outcomes the CPU engine holds at once (about 52 bytes each): configs go in blocks of
// at most this many replays.
constexpr size_t kReplaysPerBlock = size_t(1) << 19;

std::vector<double> slice(const std::vector<double>& v, size_t begin, size_t n) {
  return std::vector<double>(v.begin() + long(begin), v.begin() + long(begin + n));
}

}  // namespace

std::vector<double> ReplayResults::online_of(int config) const {
  return slice(online, size_t(config) * num_contexts, size_t(num_contexts));
}
std::vector<double> ReplayResults::final_of(int config) const {
  return slice(final_loss, size_t(config) * num_contexts, size_t(num_contexts));
}
std::vector<double> ReplayResults::watched_of(int config) const {
  if (watched.empty()) return {};
  return slice(watched, size_t(config) * num_contexts, size_t(num_contexts));
}
std::vector<double> ReplayResults::online_of(int config, int seed) const {
  return slice(online_per_seed, (size_t(config) * seeds + seed) * num_contexts, size_t(num_contexts));
}
std::vector<double> ReplayResults::final_of(int config, int seed) const {
  return slice(final_per_seed, (size_t(config) * seeds + seed) * num_contexts, size_t(num_contexts));
}

void check_call_costs(const ReplayJob& job) {
  if (!job.observation_cost.empty()) {
    if (!job.sweep || job.observation_cost.size() != size_t(job.sweep->num_contexts()))
      throw UsageError("replay: one observation cost per sweep context is needed");
    for (double f : job.observation_cost)
      if (!(f >= 0.0) || !std::isfinite(f))
        throw UsageError("replay: an observation cost must be finite and >= 0");
  }
  if (job.call_cost_us.empty()) return;
  if (job.call_cost_us.size() != job.configs.size())
    throw UsageError("replay: one per-call cost per policy config is needed");
  bool charged = false;
  for (double c : job.call_cost_us) {
    if (!(c >= 0.0) || !std::isfinite(c)) throw UsageError("replay: a per-call cost must be finite and >= 0");
    charged = charged || c > 0.0;
  }
  // The measured costs are the plugin's over one arm per algorithm and protocol; over knob arms a
  // call costs several times more, growing with the arms (docs/plugin.md "Overhead"). Charging them
  // to a knob sweep would understate what the plugin costs there.
  if (charged && job.sweep && !job.sweep->slot_shaped())
    throw UsageError(
        "--as-deployed: the plugin's measured per-call costs (data/plugin_call_costs.csv) are those of "
        "contexts with one arm per algorithm and protocol, and over knob arms a call costs more, growing "
        "with the arms (docs/plugin.md \"Overhead\"): a knob sweep is not scored as deployed");
}

void check_replay_job(const ReplayJob& job) {
  if (!job.sweep) throw UsageError("replay: no sweep");
  if (job.configs.empty()) throw UsageError("replay: no policy given");
  if (job.contexts.empty()) throw UsageError("replay: no context selected");
  if (job.seeds < 1) throw UsageError("replay: --seeds must be at least 1");
  if (job.horizon < 1) throw UsageError("replay: --horizon must be at least 1");
  if (job.policy_start < 0) throw UsageError("replay: the policy start must be >= 0");
  if (!feedback_schedule_fits(job.delay, job.window))
    throw UsageError(
        "replay: --delay must be >= 0 and the decision window >= 1, with window - 1 + delay <= " +
        std::to_string(kMaxReplayDelay) + " (got delay " + std::to_string(job.delay) + ", window " +
        std::to_string(job.window) + ")");
  check_call_costs(job);
  job.sweep->check_arms_per_context(kKnobReplayArms, "the replay engine");
  for (const PolicySpec& p : job.configs)
    if (p.slots_only)
      for (int c : job.contexts) {
        if (c < 0 || c >= job.sweep->num_contexts()) continue;  // refused below
        const auto arms = job.sweep->arms(c);
        if (std::none_of(arms.begin(), arms.end(), [](const Arm& a) { return a.default_knobs(); }))
          throw UsageError("replay: policy " + p.text +
                           " plays NCCL's own channels and chunk size only, and " +
                           job.sweep->context(c).fabric + " " + std::to_string(job.sweep->context(c).bytes) +
                           " B has no such arm");
      }
  for (int c : job.contexts)
    if (c < 0 || c >= job.sweep->num_contexts()) throw UsageError("replay: context index out of range");
}

double observation_cost_of(const ReplayJob& job, size_t config, int context) {
  if (job.observation_cost.empty() || !policy_watches(job.configs[config].config.kind)) return 0.0;
  return job.observation_cost[size_t(context)];
}

ReplayTask replay_task_of(const ReplayJob& job, size_t config, size_t index, uint64_t stream_id) {
  ReplayTask task;
  task.sweep = job.sweep->arm_view();
  task.context = job.contexts[index];
  task.stream_id = stream_id;
  task.horizon = job.horizon;
  task.delay = job.delay;
  task.window = job.window;
  task.policy_start = job.policy_start;
  task.call_cost_us = job.call_cost_us.empty() ? 0.0 : job.call_cost_us[config];
  const PolicySpec& spec = job.configs[config];
  task.observation_cost = observation_cost_of(job, config, task.context);
  if (spec.watch) task.watch = *spec.watch;
  task.slots_only = spec.slots_only;
  if (config < job.fixed_slots.size() && !job.fixed_slots[config].empty())
    task.fixed_slot = job.fixed_slots[config][size_t(task.context)];
  return task;
}

namespace {

// The results of `job`, sized and zeroed (the per-seed rows only when the job keeps them).
ReplayResults empty_replay_results(const ReplayJob& job, int n_cfg, int n_ctx, int n_seed) {
  ReplayResults res;
  res.num_configs = n_cfg;
  res.num_contexts = n_ctx;
  res.seeds = n_seed;
  res.online.assign(size_t(n_cfg) * n_ctx, 0.0);
  res.final_loss.assign(size_t(n_cfg) * n_ctx, 0.0);
  res.watched.assign(size_t(n_cfg) * n_ctx, 0.0);
  if (job.keep_per_seed) {
    res.online_per_seed.assign(size_t(n_cfg) * n_seed * n_ctx, 0.0);
    res.final_per_seed.assign(size_t(n_cfg) * n_seed * n_ctx, 0.0);
  }
  return res;
}

// For the `count` configs from `first` of one block, whose per-replay outcomes are in online /
// final_loss / final_slot ([config][seed][context]): the seed means into res, the per-seed rows
// when kept, and the raw rows in (config, context, seed) order.
void gather_block_seed_means(const ReplayJob& job, size_t first, size_t count, int n_ctx, int n_seed,
                             const std::vector<double>& online, const std::vector<double>& final_loss,
                             const std::vector<int>& final_slot, const std::vector<uint32_t>& observed,
                             std::vector<std::string>& rows, ReplayResults& res) {
  parallel_for(count * size_t(n_ctx), job.threads, [&](size_t k) {
    const size_t cfg = first + k / size_t(n_ctx), i = k % size_t(n_ctx);
    double online_sum = 0.0, final_sum = 0.0, watched_sum = 0.0;
    if (job.raw) rows[k].clear();
    for (int s = 0; s < n_seed; ++s) {
      const size_t at = ((cfg - first) * size_t(n_seed) + size_t(s)) * size_t(n_ctx) + i;
      online_sum += online[at];
      final_sum += final_loss[at];
      watched_sum += double(observed[at]) / double(job.horizon);
      if (job.keep_per_seed) {
        const size_t kept = (cfg * size_t(n_seed) + size_t(s)) * size_t(n_ctx) + i;
        res.online_per_seed[kept] = online[at];
        res.final_per_seed[kept] = final_loss[at];
      }
      if (job.raw)
        rows[k] += std::to_string(cfg) + ",\"" + job.configs[cfg].text + "\"," +
                   std::to_string(job.contexts[i]) + "," + std::to_string(job.seed_base + uint64_t(s)) + "," +
                   format_double(online[at]) + "," + format_double(final_loss[at]) + "," +
                   std::to_string(final_slot[at]) + "\n";
    }
    res.online[cfg * size_t(n_ctx) + i] = online_sum / double(n_seed);
    res.final_loss[cfg * size_t(n_ctx) + i] = final_sum / double(n_seed);
    res.watched[cfg * size_t(n_ctx) + i] = watched_sum / double(n_seed);
  });
  if (job.raw)
    for (size_t k = 0; k < count * size_t(n_ctx); ++k) *job.raw << rows[k];
}

}  // namespace

ReplayResults run_cpu_replay(const ReplayJob& job) {
  check_replay_job(job);
  const Sweep& sweep = *job.sweep;
  const int n_cfg = int(job.configs.size()), n_ctx = int(job.contexts.size()), n_seed = job.seeds;

  ReplayResults res = empty_replay_results(job, n_cfg, n_ctx, n_seed);
  const std::vector<uint64_t> stream_ids = job_stream_ids(job);
  // A first-use cost couples the contexts of a communicator (replay/first_use.hpp): their charges
  // are added once every replay of a (config, seed) is done.
  const Communicators comms = first_use_communicators(sweep, job.contexts);
  const bool coupled = comms.count() > 0;

  // Configs go in blocks whose per-replay outcomes ([config][seed][context], the device layout) are
  // held at once: (config, context) items replay every seed, then the block's charges, then the
  // seed means in seed order and the raw rows in (config, context, seed) order, so everything is
  // identical for any thread count and memory stays bounded.
  const size_t per_config = size_t(n_seed) * size_t(n_ctx);
  const size_t block = std::max<size_t>(1, kReplaysPerBlock / per_config);
  std::vector<double> online(std::min(block, size_t(n_cfg)) * per_config);
  std::vector<double> final_loss(online.size());
  std::vector<int> final_slot(online.size());
  std::vector<uint32_t> observed(online.size());
  std::vector<uint32_t> first_use(coupled ? online.size() * kNumAlgos : 0);
  std::vector<std::string> rows(job.raw ? std::min(block, size_t(n_cfg)) * size_t(n_ctx) : 0);
  for (size_t first = 0; first < size_t(n_cfg); first += block) {
    const size_t count = std::min(block, size_t(n_cfg) - first);
    parallel_for(count * size_t(n_ctx), job.threads, [&](size_t k) {
      const size_t cfg = first + k / size_t(n_ctx), i = k % size_t(n_ctx);
      const PolicySpec& spec = job.configs[cfg];
      ReplayTask task = replay_task_of(job, cfg, i, stream_ids[i]);
      visit_spec_policy_for(task.sweep, spec, [&](auto policy) {
        task.aids = exploration_aids(policy, task);
        // Seeds in groups of kBatch stepped side by side (replay_batch.hpp), each outcome
        // bit-identical to its replay_one().
        constexpr int kBatch = 4;
        decltype(policy) group[kBatch];
        ReplayTask tasks[kBatch];
        ReplayOutcome outcomes[kBatch];
        for (int s0 = 0; s0 < n_seed; s0 += kBatch) {
          const int in_group = std::min(kBatch, n_seed - s0);
          for (int b = 0; b < in_group; ++b) {
            group[b] = policy;  // fresh params copy; reset() initialises the state
            tasks[b] = task;
            tasks[b].seed = job.seed_base + uint64_t(s0 + b);
          }
          if (in_group == kBatch && !feedback_delayed(tasks[0]))
            replay_batch<kBatch>(group, tasks, outcomes);
          else
            for (int b = 0; b < in_group; ++b) outcomes[b] = replay_one(group[b], tasks[b]);
          for (int b = 0; b < in_group; ++b) {
            const size_t at = ((cfg - first) * size_t(n_seed) + size_t(s0 + b)) * size_t(n_ctx) + i;
            online[at] = outcomes[b].online_loss;
            final_loss[at] = outcomes[b].final_loss;
            final_slot[at] = outcomes[b].final_slot;
            observed[at] = outcomes[b].observed;
            if (coupled)
              std::copy_n(outcomes[b].first_use, kNumAlgos, first_use.begin() + long(at * kNumAlgos));
          }
        }
        return 0;
      });
      if (job.progress) job.progress->units_done(1);
    });
    if (coupled)
      charge_first_uses(job, comms, stream_ids, first_use.data(), online.data(), count, job.horizon);
    gather_block_seed_means(job, first, count, n_ctx, n_seed, online, final_loss, final_slot, observed, rows,
                            res);
  }
  return res;
}

}  // namespace ncclbot
