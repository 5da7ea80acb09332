#pragma once
// The check behind `ncclbot plugin-check`: it loads the built tuner plugin as NCCL does (dlopen
// RTLD_NOW | RTLD_LOCAL, the versioned v5 structs; v6 for a knob sweep) and checks that, driven with
// the sweep, it makes the replay engine's decisions call for call:
//   for every context: one communicator (tuner + profiler init), then T calls of
//     cost table = the sweep's prior on the measured arms, -1 elsewhere (NCCL's layout) ->
//     getCollInfo -> the pick by NCCL's rule (smallest non-negative, strict <, row-major) ->
//     compare with the replay's step t -> latency of the picked arm drawn from the sweep with the
//     replay's Philox keying -> fed back through profiler events (Coll + KernelCh with GPU
//     timestamps), or through ncclbotReportLatency when nanosecond timestamps cannot carry it exactly.
// A knob sweep (local mode only) sets NCCLBOT_KNOBS per context to the lists whose crossing is its
// arms (knob_context.hpp), reads the plugin's channel count from nChannels and its chunk from v6
// getChunkSize, and compares arms.
// With ranks = N (2..64) it checks leader mode instead, the plugin as a multi-rank job runs it: for
// every context, N processes each dlopen the plugin with NCCLBOT_LEADER on loopback (process 0 the
// leader), hold the communicator's nodes x GPUs-per-node ranks between them (process 0 rank 0
// alone, as a job's leader process drives one GPU) and play T calls in lockstep, every rank's
// latency reported through ncclbotReportLatency before the next call; every rank's every decision
// is compared with the replay of the leader's protocol (--as-deployed leader: delay
// kLeaderPrefetch, window kLeaderWindow, policy start kLeaderStart; rank_processes.hpp).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot::plugin_check {

// The most processes a leader-mode check starts for one context.
inline constexpr int kMaxCheckRanks = 64;

// What the check is asked to do (plugin-check's options, less its context filter and its printing).
struct CheckSettings {
  std::string plugin_path, sweep_path;
  uint64_t seed = 0;
  int horizon = 200;
  int delay = 0;
  std::string feed = "auto";
  std::string log_path;
  int ranks = 1;                        // processes; > 1: leader mode (above)
  double rank_timeout = 300;            // seconds one context's processes may take, with ranks > 1
  std::vector<std::string> plugin_env;  // NAME=VALUE set for the plugin after the check's own
  bool progress = true;                 // every 20 contexts, how far the check is (on stderr)
};

struct Mismatch {
  // Slots in a slot sweep, indices of the context's arms in a knob sweep (arm_label names both); -2:
  // the plugin ran an arm none of the context's.
  int context = 0, step = 0, plugin_slot = -1, replay_slot = -1;
  int rank = -1;  // the communicator rank, in leader mode
};

struct ContextOutcome {
  bool checked = false;
  std::string skipped;  // why, when not checked
  int steps = 0, via_profiler = 0, via_report = 0, not_joined = 0;
  int rank_disagreements = 0;  // leader mode: calls on which the ranks did not all play one arm
  std::vector<Mismatch> mismatches;
  std::string failure;  // leader mode: a rank process crashed, gave up or hung (nothing compared)
};

// The sums over the contexts checked, and every first difference.
struct CheckTotals {
  int checked = 0, skipped = 0, steps = 0, via_profiler = 0, via_report = 0, not_joined = 0;
  int rank_disagreements = 0;
  std::string failure;  // a rank process that crashed, gave up or hung: the check stops there
  std::vector<Mismatch> mismatches;
  std::set<int> differing;  // contexts with a mismatch
};

// "Ring/LL", or "none" for no arm.
std::string slot_label(int slot);
// A mismatch's arm `index` of context `context`: slot_label in a slot sweep, the knob arm as reports
// name it in a knob sweep (arm_label, core/names.hpp: "Ring/Simple channels=8 chunk_bytes=65536").
std::string arm_label(const Sweep& sweep, int context, int index);

// Checks the plugin on `contexts` of `sweep` (read from settings.sweep_path) with the live policy
// `spec`: in this process, or with settings.ranks > 1 in leader mode. Says on stderr why a context
// was skipped, how far the check is, and which rank process failed.
CheckTotals check_plugin(const CheckSettings& settings, const Sweep& sweep, const std::vector<int>& contexts,
                         const PolicySpec& spec);

}  // namespace ncclbot::plugin_check
