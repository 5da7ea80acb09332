// ReplayJob -> device_replay() -> ReplayResults, in the CPU engine's layouts and row order.
#include "ncclbot/replay/cuda_engine.hpp"

#include <algorithm>
#include <ostream>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

void prepare_device_replay(const ReplayJob& job, DeviceReplayInputs& out) {
  check_replay_job(job);
  const Sweep& sweep = *job.sweep;
  const size_t n_cfg = job.configs.size(), n_sweep = size_t(sweep.num_contexts());

  out.stream_ids = job_stream_ids(job);
  out.configs.clear();
  out.slots_only.clear();
  for (const PolicySpec& spec : job.configs) {
    if (spec.conservative)  // backend_for_specs() keeps these on the CPU
      throw UsageError("--backend cuda: policy " + spec.text +
                       " runs in the conservative wrapper, which the CUDA replay kernels do not hold");
    if (spec.watch)
      throw UsageError("--backend cuda: policy " + spec.text +
                       " has a watch rule, which the CUDA replay kernels do not hold");
    out.configs.push_back(spec.config);
    out.slots_only.push_back(uint8_t(spec.slots_only));
  }
  if (std::none_of(out.slots_only.begin(), out.slots_only.end(), [](uint8_t f) { return f != 0; }))
    out.slots_only.clear();
  // Frozen decisions as one [config][sweep context] table; configs without any get -1 (none).
  out.fixed_slots.clear();
  bool any_fixed = false;
  for (size_t cfg = 0; cfg < std::min(n_cfg, job.fixed_slots.size()); ++cfg)
    any_fixed = any_fixed || !job.fixed_slots[cfg].empty();
  if (any_fixed) {
    out.fixed_slots.assign(n_cfg * n_sweep, -1);
    for (size_t cfg = 0; cfg < std::min(n_cfg, job.fixed_slots.size()); ++cfg) {
      const auto& f = job.fixed_slots[cfg];
      if (f.empty()) continue;
      if (f.size() != n_sweep) throw UsageError("replay: frozen decisions must cover every sweep context");
      std::copy(f.begin(), f.end(), out.fixed_slots.begin() + long(cfg * n_sweep));
    }
  }

  // What watching costs, per (config, job context), as replay_task_of gives the CPU engine's tasks.
  out.observation_cost.clear();
  if (!job.observation_cost.empty())
    for (size_t cfg = 0; cfg < n_cfg; ++cfg)
      for (int c : job.contexts) out.observation_cost.push_back(observation_cost_of(job, cfg, c));

  DeviceReplayRequest& q = out.request;
  q.sweep = sweep.arm_view();  // a knob sweep's arms by index, as the CPU engine's tasks see them
  q.contexts = job.contexts;
  q.stream_ids = out.stream_ids;
  q.configs = out.configs;
  q.fixed_slots = out.fixed_slots;
  q.seeds = job.seeds;
  q.seed_base = job.seed_base;
  q.horizon = job.horizon;
  q.delay = job.delay;
  q.window = job.window;
  q.policy_start = job.policy_start;
  q.call_cost_us = job.call_cost_us;
  q.observation_cost = out.observation_cost;
  q.slots_only = out.slots_only;
  out.communicators = first_use_communicators(sweep, job.contexts);
  q.members = out.communicators.members;
  q.member_begin = out.communicators.begin;
  q.connected = out.communicators.connected;
  q.keep_per_replay = job.keep_per_seed || job.raw != nullptr;
  if (job.device_block > 0) q.block = job.device_block;
}

ReplayResults replay_results_from_device(const ReplayJob& job, DeviceReplayResult&& d) {
  const int n_cfg = int(job.configs.size()), n_ctx = int(job.contexts.size()), n_seed = job.seeds;
  ReplayResults res;
  res.num_configs = n_cfg;
  res.num_contexts = n_ctx;
  res.seeds = n_seed;
  res.online = std::move(d.online_mean);
  res.final_loss = std::move(d.final_mean);
  res.watched.assign(res.online.size(), 1.0);  // the kernels watch every call
  if (job.keep_per_seed) {  // device_replay's [config][seed][context] is the CPU engine's layout
    res.online_per_seed = d.online;
    res.final_per_seed = d.final_loss;
  }
  if (job.raw) {  // rows in the CPU engine's order: config, context, then seed
    for (int cfg = 0; cfg < n_cfg; ++cfg)
      for (int i = 0; i < n_ctx; ++i) {
        std::string rows;
        for (int s = 0; s < n_seed; ++s) {
          const size_t at = (size_t(cfg) * n_seed + size_t(s)) * n_ctx + size_t(i);
          rows += std::to_string(cfg) + ",\"" + job.configs[size_t(cfg)].text + "\"," +
                  std::to_string(job.contexts[size_t(i)]) + "," +
                  std::to_string(job.seed_base + uint64_t(s)) + "," + format_double(d.online[at]) + "," +
                  format_double(d.final_loss[at]) + "," + std::to_string(d.final_slot[at]) + "\n";
        }
        *job.raw << rows;
      }
  }
  return res;
}

#ifdef NCCLBOT_HAVE_CUDA
ReplayResults run_cuda_replay(const ReplayJob& job) {
  DeviceReplayInputs inputs;
  prepare_device_replay(job, inputs);
  ReplayResults res = replay_results_from_device(job, device_replay(inputs.request));
  // The kernels report nothing while they run: the whole job counts as done once it is back.
  if (job.progress) job.progress->units_done(job.configs.size() * job.contexts.size());
  return res;
}
#endif

}  // namespace ncclbot
