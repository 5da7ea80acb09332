#include "ncclbot/replay/cpu_engine.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/replay/exploration_table.hpp"
#include "ncclbot/replay/parallel_for.hpp"
#include "ncclbot/replay/replay_batch.hpp"
#include "ncclbot/replay/stream_id.hpp"

namespace ncclbot {

uint64_t context_stream_id(const Context& c) {
  return replay_stream_id(int(c.collective), c.nodes, c.gpus_per_node, c.bytes);
}

namespace {

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
std::vector<double> ReplayResults::online_of(int config, int seed) const {
  return slice(online_per_seed, (size_t(config) * seeds + seed) * num_contexts, size_t(num_contexts));
}
std::vector<double> ReplayResults::final_of(int config, int seed) const {
  return slice(final_per_seed, (size_t(config) * seeds + seed) * num_contexts, size_t(num_contexts));
}

void check_call_costs(const ReplayJob& job) {
  if (job.call_cost_us.empty()) return;
  if (job.call_cost_us.size() != job.configs.size())
    throw UsageError("replay: one per-call cost per policy config is needed");
  for (double c : job.call_cost_us)
    if (!(c >= 0.0) || !std::isfinite(c)) throw UsageError("replay: a per-call cost must be finite and >= 0");
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
  for (int c : job.contexts)
    if (c < 0 || c >= job.sweep->num_contexts()) throw UsageError("replay: context index out of range");
}

ReplayTask replay_task_of(const ReplayJob& job, size_t config, size_t index, uint64_t stream_id) {
  ReplayTask task;
  task.sweep = job.sweep->view();
  task.context = job.contexts[index];
  task.stream_id = stream_id;
  task.horizon = job.horizon;
  task.delay = job.delay;
  task.window = job.window;
  task.policy_start = job.policy_start;
  task.call_cost_us = job.call_cost_us.empty() ? 0.0 : job.call_cost_us[config];
  if (config < job.fixed_slots.size() && !job.fixed_slots[config].empty())
    task.fixed_slot = job.fixed_slots[config][size_t(task.context)];
  return task;
}

ReplayResults run_cpu_replay(const ReplayJob& job) {
  check_replay_job(job);
  const Sweep& sweep = *job.sweep;
  const int n_cfg = int(job.configs.size()), n_ctx = int(job.contexts.size()), n_seed = job.seeds;

  ReplayResults res;
  res.num_configs = n_cfg;
  res.num_contexts = n_ctx;
  res.seeds = n_seed;
  res.online.assign(size_t(n_cfg) * n_ctx, 0.0);
  res.final_loss.assign(size_t(n_cfg) * n_ctx, 0.0);
  if (job.keep_per_seed) {
    res.online_per_seed.assign(size_t(n_cfg) * n_seed * n_ctx, 0.0);
    res.final_per_seed.assign(size_t(n_cfg) * n_seed * n_ctx, 0.0);
  }
  std::vector<uint64_t> stream_ids(static_cast<size_t>(n_ctx));
  for (int i = 0; i < n_ctx; ++i)
    stream_ids[size_t(i)] = context_stream_id(sweep.context(job.contexts[size_t(i)]));

  // Items are (config, context) in row-major order; raw rows are buffered per chunk and written in
  // item order, so the file is identical for any thread count and memory stays bounded.
  const size_t n_items = size_t(n_cfg) * n_ctx;
  const size_t chunk = job.raw ? 1024 : n_items;
  std::vector<std::string> rows(job.raw ? chunk : 0);
  for (size_t first = 0; first < n_items; first += chunk) {
    const size_t count = std::min(chunk, n_items - first);
    parallel_for(count, job.threads, [&](size_t k) {
      const size_t item = first + k;
      const int cfg = int(item / size_t(n_ctx)), i = int(item % size_t(n_ctx));
      const PolicySpec& spec = job.configs[size_t(cfg)];
      ReplayTask task = replay_task_of(job, size_t(cfg), size_t(i), stream_ids[size_t(i)]);
      double online_sum = 0.0, final_sum = 0.0;
      std::string* out_rows = job.raw ? &rows[k] : nullptr;
      if (out_rows) out_rows->clear();
      visit_policy(spec.config, [&](auto policy) {
        task.aids = exploration_aids(policy, task);
        // Seeds in groups of kBatch stepped side by side (replay_batch.hpp); outcomes are then
        // consumed in seed order, so every sum is the same sequential sum for any grouping.
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
            const int s = s0 + b;
            const ReplayOutcome& o = outcomes[b];
            online_sum += o.online_loss;
            final_sum += o.final_loss;
            if (job.keep_per_seed) {
              const size_t at = (size_t(cfg) * n_seed + s) * n_ctx + i;
              res.online_per_seed[at] = o.online_loss;
              res.final_per_seed[at] = o.final_loss;
            }
            if (out_rows)
              *out_rows += std::to_string(cfg) + ",\"" + spec.text + "\"," + std::to_string(task.context) +
                           "," + std::to_string(tasks[b].seed) + "," + format_double(o.online_loss) + "," +
                           format_double(o.final_loss) + "," + std::to_string(o.final_slot) + "\n";
          }
        }
        return 0;
      });
      res.online[item] = online_sum / double(n_seed);
      res.final_loss[item] = final_sum / double(n_seed);
      if (job.progress) job.progress->units_done(1);
    });
    if (job.raw)
      for (size_t k = 0; k < count; ++k) *job.raw << rows[k];
  }
  return res;
}

}  // namespace ncclbot
