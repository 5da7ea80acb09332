#pragma once
// What the local and the leader-mode checks share: the plugin loaded as NCCL loads it, NCCL's cost
// table of a context, the replay's decisions and latencies to compare with, the replay's draw of a
// latency; and one context checked call for call in this process (local mode).
#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/core/context.hpp"
#include "ncclbot/core/sweep_view.hpp"
#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"
#include "plugin_check/plugin_check.hpp"

namespace ncclbot::plugin_check {

struct LoadedPlugin {
  void* handle = nullptr;
  const NcclTunerV5* tuner = nullptr;
  const NcclTunerV6* tuner6 = nullptr;  // null when the plugin has no v6 (no chunk: no knob sweeps)
  const NcclProfilerV5* profiler = nullptr;
  ncclbotReportLatency_t report = nullptr;
};

// dlopen(RTLD_NOW | RTLD_LOCAL) and the v5 tuner and profiler; a usage error naming what is missing.
LoadedPlugin load_plugin(const std::string& path);

// The replay's draw of step t (replay/replay.hpp): word t of the (seed, stream id) Philox stream
// picks one of the arm's R samples.
float replay_draw(const SweepView& v, int c, int slot, uint64_t seed, uint64_t stream_id, int t);

// NCCL's cost table of context c: the model's time on every arm it could run, -1 on the others.
// false, with the reason in `skipped`, when the context cannot be checked call for call.
struct CostTable7x3 {
  float t[kNumNcclAlgos][kNumProtos];
};
bool context_cost_table(const SweepView& v, int c, CostTable7x3* table, std::string* skipped);

// context_cost_table, or for a knob sweep (`v` its arm view) knob_context, which also gives the
// NCCLBOT_KNOBS text in `knobs`.
bool context_table(const SweepView& v, int c, CostTable7x3* table, std::string* knobs, std::string* skipped);

// The arm NCCL runs for one call: the tuner edits a copy of the cost table, then NCCL's rule picks;
// with `chunk_hook` (a knob sweep, tuner v6) NCCL asks the chunk for the picked arm, per channel as
// it does outside CollNet. The channels and chunk are the tuner's (0: NCCL's own).
struct PluginPick {
  int slot = -1;  // -1: none
  Arm arm{};
};
PluginPick tuner_pick(const NcclTunerV5& plugin_tuner, const NcclTunerV6* chunk_hook, void* comm,
                      const Context& ctx, const float (&table)[kNumNcclAlgos][kNumProtos]);
// The arm the plugin played as the replay numbers it: its slot in a slot sweep; in a knob sweep (`v`
// its arm view) its index among context c's measured arms, -2 when it is none of them; -1 when no
// arm was left to run.
int played_index(const SweepView& v, int c, const PluginPick& p);

// The reference: the replay engine's own steps (replay_one, the code the CPU engine runs), each
// step's slot and observed latency.
struct ReplayReference {
  uint64_t stream_id = 0;
  std::vector<int> slots;
  std::vector<float> latency;
};
ReplayReference replay_reference(const SweepView& v, const Context& ctx, int c, const PolicySpec& spec,
                                 const CheckSettings& settings, int delay, int window, int policy_start);

// Sets NAME=VALUE from --plugin-env (after the check's own settings, so it wins).
void apply_plugin_env(const std::vector<std::string>& assignments);

// Local mode: context c's communicator driven in this process, every decision compared with the
// replay's.
ContextOutcome check_context(const LoadedPlugin& plugin, const Sweep& sweep, int c, const PolicySpec& spec,
                             const CheckSettings& settings);

}  // namespace ncclbot::plugin_check
