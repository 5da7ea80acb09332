#include "plugin_check/context_check.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <tuple>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_for_view.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin_check/knob_context.hpp"

namespace ncclbot::plugin_check {
namespace {

// Names as NCCL's profiler spells them.
const char* profiler_func_name(Collective c) {
  switch (c) {
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kReduceScatter:
      return "ReduceScatter";
    default:
      return "AllReduce";
  }
}

// Call t's latency of `ns` nanoseconds, fed back through NCCL's profiler events as NCCL emits
// them: a Coll event (`count` per rank, int8 so count = bytes) announcing `channels` channels,
// stopped when "enqueued", then that many kernel channels whose slowest (the last) spans the latency,
// with GPU timestamps from `clock_ns`, which moves past them.
void feed_profiler_events(const NcclProfilerV5& profiler, void* prof, Collective collective, size_t count,
                          int t, int pick, int channels, long long ns, uint64_t& clock_ns) {
  NcclProfilerEventDescrV5 d;
  std::memset(&d, 0, sizeof d);
  d.type = kNcclProfileColl;
  d.rank = 0;
  d.coll.seqNumber = uint64_t(t);
  d.coll.func = profiler_func_name(collective);
  d.coll.count = count;
  d.coll.datatype = "ncclInt8";
  d.coll.nChannels = uint8_t(channels);
  d.coll.nWarps = 16;
  const std::string algo(algo_name(slot_algo(pick))), proto(proto_name(slot_proto(pick)));
  d.coll.algo = algo.c_str();
  d.coll.proto = proto.c_str();
  void* coll = nullptr;
  profiler.startEvent(prof, &coll, &d);
  profiler.stopEvent(coll);
  for (int ch = 0; ch < channels; ++ch) {
    const uint64_t span = ch + 1 < channels ? uint64_t(ns) / 2 : uint64_t(ns);
    NcclProfilerEventDescrV5 k;
    std::memset(&k, 0, sizeof k);
    k.type = kNcclProfileKernelCh;
    k.parentObj = coll;
    k.kernelCh.channelId = uint8_t(ch);
    k.kernelCh.pTimer = clock_ns + uint64_t(ch) * 7;
    void* h = nullptr;
    profiler.startEvent(prof, &h, &k);
    NcclProfilerEventStateArgs args;
    args.kernelCh.pTimer = k.kernelCh.pTimer + span;
    profiler.recordEventState(h, kNcclProfilerKernelChStop, &args);
    profiler.stopEvent(h);
  }
  clock_ns += uint64_t(ns) + 1000;
}

// NCCL's own channel count in the check (what the profiler reports when the tuner leaves nChannels 0)
// and its chunk size on getChunkSize's entry: above every chunk a sweep may hold (2^30), so the
// plugin's chunk comes back unclamped and NCCL's own is told apart.
constexpr int kNcclChannels = 2;
constexpr size_t kNcclChunk = size_t(1) << 31;

}  // namespace

LoadedPlugin load_plugin(const std::string& path) {
  LoadedPlugin p;
  p.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p.handle) throw UsageError("--plugin: cannot load '" + path + "': " + dlerror());
  p.tuner = static_cast<const NcclTunerV5*>(dlsym(p.handle, "ncclTunerPlugin_v5"));
  p.tuner6 = static_cast<const NcclTunerV6*>(dlsym(p.handle, "ncclTunerPlugin_v6"));
  p.profiler = static_cast<const NcclProfilerV5*>(dlsym(p.handle, "ncclProfiler_v5"));
  p.report = reinterpret_cast<ncclbotReportLatency_t>(dlsym(p.handle, "ncclbotReportLatency"));
  if (!p.tuner || !p.tuner->init || !p.tuner->getCollInfo || !p.tuner->finalize)
    throw UsageError("--plugin: '" + path + "' exports no usable ncclTunerPlugin_v5");
  if (!p.profiler)
    throw UsageError("--plugin: '" + path + "' exports no ncclProfiler_v5 (the feedback path)");
  return p;
}

float replay_draw(const SweepView& v, int c, int slot, uint64_t seed, uint64_t stream_id, int t) {
  const Philox4x32 block =
      philox4x32_10(Philox4x32{{uint32_t(t) >> 2, 0u, uint32_t(stream_id), uint32_t(stream_id >> 32)}},
                    uint32_t(seed), uint32_t(seed >> 32));
  const uint32_t r = uniform_below(block.v[t & 3], uint32_t(v.samples));
  return v.sample(c, slot, int(r));
}

std::string slot_label(int slot) {
  if (slot < 0) return "none";
  return std::string(algo_name(slot_algo(slot))) + "/" + std::string(proto_name(slot_proto(slot)));
}

bool context_cost_table(const SweepView& v, int c, CostTable7x3* table, std::string* skipped) {
  const ArmMask mask = v.mask(c);
  if (mask.nccl_arms() != mask) {
    // A simulated arm (HiPIPE) has no row in NCCL's table: the replay could pick what the plugin
    // cannot, so there is nothing to compare call for call.
    *skipped = "the sweep has the simulated HiPIPE arm, which NCCL's cost table cannot hold";
    return false;
  }
  for (int s = 0; s < kNumNcclArms; ++s) {
    const float p = v.prior(c, s);
    // An arm that was measured but has no prediction cannot be expressed in a cost table.
    if (mask.has(s) && !(p >= 0.0f && std::isfinite(p))) {
      *skipped = "arm " + slot_label(s) + " was measured but has no prior_us";
      return false;
    }
    table->t[s / kNumProtos][s % kNumProtos] = mask.has(s) ? p : -1.0f;
  }
  return true;
}

ReplayReference replay_reference(const SweepView& v, const Context& ctx, int c, const PolicySpec& spec,
                                 const CheckSettings& settings, int delay, int window, int policy_start) {
  ReplayTask task;
  task.sweep = v;
  task.context = c;
  task.seed = settings.seed;
  task.stream_id = context_stream_id(ctx);
  task.horizon = settings.horizon;
  task.delay = delay;
  task.window = window;
  task.policy_start = policy_start;
  task.slots_only = spec.slots_only;
  ReplayReference ref;
  ref.stream_id = task.stream_id;
  ref.slots.assign(size_t(settings.horizon), -1);
  ref.latency.assign(size_t(settings.horizon), 0.0f);
  visit_policy_for(v, spec.config, [&](auto policy) {
    replay_one(policy, task, [&](int t, int slot, float x) {
      ref.slots[size_t(t)] = slot;
      ref.latency[size_t(t)] = x;
    });
    return 0;
  });
  return ref;
}

void apply_plugin_env(const std::vector<std::string>& assignments) {
  for (const std::string& a : assignments) {
    const size_t eq = a.find('=');
    setenv(a.substr(0, eq).c_str(), a.substr(eq + 1).c_str(), 1);
  }
}

PluginPick tuner_pick(const NcclTunerV5& plugin_tuner, const NcclTunerV6* chunk_hook, void* comm,
                      const Context& ctx, const float (&table)[kNumNcclAlgos][kNumProtos]) {
  float call_table[kNumNcclAlgos][kNumProtos];
  std::memcpy(call_table, table, sizeof table);
  int channels = 0;
  plugin_tuner.getCollInfo(comm, int(ctx.collective), size_t(ctx.bytes), 1,
                           reinterpret_cast<float**>(call_table), kNumNcclAlgos, kNumProtos, 0, &channels);
  const int slot = nccl_argmin(ArmMask{(1u << kNumNcclArms) - 1},
                               [&](int s) { return call_table[s / kNumProtos][s % kNumProtos]; });
  PluginPick pick{slot, Arm::of_slot(slot >= 0 ? slot : 0)};
  if (slot < 0 || chunk_hook == nullptr) return pick;
  pick.arm.channels = uint16_t(channels > 0 ? channels : 0);
  size_t chunk = kNcclChunk;
  const size_t per_channel = size_t(ctx.bytes) / size_t(channels > 0 ? channels : kNcclChannels);
  chunk_hook->getChunkSize(comm, int(ctx.collective), per_channel, int(pick.arm.algo), int(pick.arm.proto), 1,
                           &chunk);
  pick.arm.chunk_bytes = chunk == kNcclChunk ? 0 : uint32_t(chunk);
  return pick;
}

int played_index(const SweepView& v, int c, const PluginPick& p) {
  if (v.slot_shaped() || p.slot < 0) return p.slot;
  const ValidArms valid = v.valid_arms(c);
  for (int s = 0; s < v.arms; ++s)
    if (valid.has(s) && v.arm(c, s) == p.arm) return s;
  return -2;
}

bool context_table(const SweepView& v, int c, CostTable7x3* table, std::string* knobs, std::string* skipped) {
  if (v.slot_shaped()) return context_cost_table(v, c, table, skipped);
  return knob_context(v, c, table, knobs, skipped);
}

ContextOutcome check_context(const LoadedPlugin& plugin, const Sweep& sweep, int c, const PolicySpec& spec,
                             const CheckSettings& settings) {
  ContextOutcome out;
  const SweepView v = sweep.arm_view();
  const Context& ctx = sweep.context(c);
  const bool knobs = !v.slot_shaped();
  CostTable7x3 cost;
  std::string knob_lists;
  if (!context_table(v, c, &cost, &knob_lists, &out.skipped)) return out;
  // A knob sweep's context: its own lists for the plugin's knob mode, read at the communicator's init.
  if (knobs) setenv("NCCLBOT_KNOBS", knob_lists.c_str(), 1);
  const auto& table = cost.t;
  const int ranks = ctx.nodes * ctx.gpus_per_node;
  const bool per_rank_count =
      ctx.collective == Collective::kAllGather || ctx.collective == Collective::kReduceScatter;
  const bool bytes_fit_descriptor = !per_rank_count || ctx.bytes % uint64_t(ranks) == 0;

  const ReplayReference ref = replay_reference(v, ctx, c, spec, settings, settings.delay, 1, 0);
  const std::vector<int>& replay_slots = ref.slots;
  const std::vector<float>& replay_latency = ref.latency;

  // One communicator per context, with an id of its own; the profiler is initialised first, as
  // NCCL does. A knob sweep binds tuner v6, whose getChunkSize sets the chunk.
  const uint64_t comm_id = 0x6e63636c62000000ull + uint64_t(c);
  void* prof = nullptr;
  void* tuner = nullptr;
  int mask_bits = 0;
  const NcclTunerV6* chunk_hook = knobs ? plugin.tuner6 : nullptr;
  plugin.profiler->init(&prof, comm_id, &mask_bits, "plugin-check", ctx.nodes, ranks, 0, nullptr);
  if (chunk_hook)
    chunk_hook->init(&tuner, comm_id, size_t(ranks), size_t(ctx.nodes), nullptr, nullptr, nullptr);
  else
    plugin.tuner->init(&tuner, comm_id, size_t(ranks), size_t(ctx.nodes), nullptr, nullptr, nullptr);
  out.checked = true;
  uint64_t clock_ns = 1000000;
  // A call's latency goes back to the plugin as NCCL's profiler would deliver it, `delay` calls
  // late: after call t + D is decided and before call t + D + 1 (replay/replay.hpp).
  auto report_latency = [&](int t, const PluginPick& pick, float x) {
    const long long ns = std::llround(double(x) * 1000.0);
    const bool exact_in_ns = ns > 0 && float(double(ns) / 1000.0) == x;
    const bool use_profiler =
        settings.feed == "profiler" || (settings.feed == "auto" && exact_in_ns && bytes_fit_descriptor);
    if (use_profiler) {
      feed_profiler_events(*plugin.profiler, prof, ctx.collective,
                           size_t(per_rank_count ? ctx.bytes / uint64_t(ranks) : ctx.bytes), t, pick.slot,
                           pick.arm.channels > 0 ? int(pick.arm.channels) : kNcclChannels, ns, clock_ns);
      ++out.via_profiler;
    } else {
      if (!plugin.report)
        throw UsageError("--plugin exports no ncclbotReportLatency, needed for --feed report");
      const int rc = plugin.report(comm_id, ranks, ctx.nodes, int(ctx.collective), size_t(ctx.bytes),
                                   int(slot_algo(pick.slot)), int(slot_proto(pick.slot)), double(x));
      if (rc != 0) ++out.not_joined;
      ++out.via_report;
    }
  };
  std::deque<std::tuple<int, PluginPick, float>> in_flight;
  for (int t = 0; t < settings.horizon; ++t) {
    const PluginPick pick = tuner_pick(*plugin.tuner, chunk_hook, tuner, ctx, table);
    const int chosen = played_index(v, c, pick);
    ++out.steps;
    if (chosen != replay_slots[size_t(t)]) {
      out.mismatches.push_back({c, t, chosen, replay_slots[size_t(t)]});
      break;  // later steps follow from different observations
    }
    // The latency the call observed: the replay's draw, re-derived here as a check; with call
    // dynamics (levels, warm-up) it is the replay core's observed value.
    const float x =
        v.dynamic() ? replay_latency[size_t(t)] : replay_draw(v, c, chosen, settings.seed, ref.stream_id, t);
    if (std::memcmp(&x, &replay_latency[size_t(t)], sizeof x) != 0)
      throw std::runtime_error("plugin-check's draw differs from the replay's at context " +
                               std::to_string(c) + " step " + std::to_string(t));
    in_flight.emplace_back(t, pick, x);
    if (int(in_flight.size()) > settings.delay) {
      const auto [u, u_pick, u_x] = in_flight.front();
      in_flight.pop_front();
      report_latency(u, u_pick, u_x);
    }
  }
  plugin.tuner->finalize(tuner);
  plugin.profiler->finalize(prof);
  return out;
}

}  // namespace ncclbot::plugin_check
