#include "plugin_check/plugin_check.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "base/random_key.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/output_file.hpp"
#include "plugin_check/context_check.hpp"
#include "plugin_check/rank_processes.hpp"

namespace ncclbot::plugin_check {
namespace {

// Adds the outcome of context c, the i-th of `contexts`, to the totals; says on stderr why it was
// skipped, and (with settings.progress) every 20 contexts how far the check is.
void tally_context(CheckTotals& totals, size_t i, int c, const ContextOutcome& o,
                   const CheckSettings& settings, size_t contexts) {
  if (!o.checked) {
    ++totals.skipped;
    command_err() << "plugin-check: context " << c << " skipped: " << o.skipped << "\n";
    return;
  }
  ++totals.checked;
  totals.steps += o.steps;
  totals.via_profiler += o.via_profiler;
  totals.via_report += o.via_report;
  totals.not_joined += o.not_joined;
  totals.rank_disagreements += o.rank_disagreements;
  if (!o.mismatches.empty()) totals.differing.insert(c);
  totals.mismatches.insert(totals.mismatches.end(), o.mismatches.begin(), o.mismatches.end());
  if (settings.progress && contexts >= 20 && (i + 1) % 20 == 0)
    command_err() << "plugin-check: " << (i + 1) << "/" << contexts << " contexts\n";
}

// --ranks: every context in rank processes of its own, until one of them fails.
void check_contexts_leader_mode(CheckTotals& totals, const Sweep& sweep, const std::vector<int>& contexts,
                                const PolicySpec& spec, const CheckSettings& settings) {
  // The rank processes set the plugin's environment themselves; this process never loads it.
  preflight_plugin(settings.plugin_path);
  const std::string secret = random_hex_key();  // the leader's and followers', one per run
  for (size_t i = 0; i < contexts.size() && totals.failure.empty(); ++i) {
    const ContextOutcome o = check_context_ranks(sweep, contexts[i], spec, settings, secret);
    totals.failure = o.failure;
    if (totals.failure.empty()) tally_context(totals, i, contexts[i], o, settings, contexts.size());
  }
  if (!totals.failure.empty()) command_err() << "plugin-check: ERROR " << totals.failure << "\n";
}

// --log: a new file in an existing folder, named without %r; the plugin is told to write it.
void use_decision_log(const CheckSettings& settings) {
  // A log of one run: appending to an older one would mix two policies under one header.
  check_output_not_input(settings.log_path, {settings.sweep_path, settings.plugin_path}, "--log");
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(settings.log_path, ec)))  // a dangling symlink exists too
    throw UsageError("--log " + settings.log_path +
                     " exists; plugin-check writes a new log (remove it first)");
  const fs::path folder = fs::path(settings.log_path).parent_path();
  if (!folder.empty() && !fs::is_directory(folder, ec))
    throw UsageError("--log " + settings.log_path + ": there is no folder '" + folder.string() +
                     "' to write it in");
  if (settings.log_path.find('%') != std::string::npos)
    throw UsageError("--log names one file (no %r: plugin-check drives a single rank)");
  setenv("NCCLBOT_LOG", settings.log_path.c_str(), 1);
}

// Local mode: the plugin loaded in this process, every context's communicator driven here.
void check_contexts_local_mode(CheckTotals& totals, const Sweep& sweep, const std::vector<int>& contexts,
                               const PolicySpec& spec, const CheckSettings& settings) {
  // The plugin reads its settings at each communicator's init. One process drives every rank's
  // decisions here, so the rank-local learner is the one to compare (docs/plugin.md).
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", spec.text.c_str(), 1);
  setenv("NCCLBOT_SEED", std::to_string(settings.seed).c_str(), 1);
  setenv("NCCLBOT_AGREEMENT", "local", 1);
  for (const char* name : {"NCCLBOT_STATE", "NCCLBOT_TABLE", "NCCLBOT_LEADER", "NCCLBOT_LOG",
                           "NCCLBOT_LOG_RANKS", "NCCLBOT_RANK", "NCCLBOT_KNOBS"})
    unsetenv(name);
  const bool knobs = !sweep.slot_shaped();
  if (!settings.log_path.empty()) use_decision_log(settings);
  apply_plugin_env(settings.plugin_env);
  const LoadedPlugin plugin = load_plugin(settings.plugin_path);
  if (knobs && !plugin.tuner6)
    throw UsageError("--plugin: '" + settings.plugin_path +
                     "' exports no ncclTunerPlugin_v6, whose getChunkSize a knob sweep's chunk sizes need");
  for (size_t i = 0; i < contexts.size(); ++i)
    tally_context(totals, i, contexts[i], check_context(plugin, sweep, contexts[i], spec, settings), settings,
                  contexts.size());
  std::error_code ec;
  if (!settings.log_path.empty() &&
      !std::filesystem::is_regular_file(std::filesystem::symlink_status(settings.log_path, ec)))
    throw UsageError("--log " + settings.log_path +
                     ": the plugin wrote no decision log (its warning above says why)");
}

}  // namespace

std::string arm_label(const Sweep& sweep, int context, int index) {
  if (sweep.slot_shaped()) return slot_label(index);
  if (index == -2) return "none of the context's arms";
  return index < 0 ? std::string("none") : ncclbot::arm_label(sweep.arm_view().arm(context, index));
}

CheckTotals check_plugin(const CheckSettings& settings, const Sweep& sweep, const std::vector<int>& contexts,
                         const PolicySpec& spec) {
  CheckTotals totals;
  if (settings.ranks > 1)
    check_contexts_leader_mode(totals, sweep, contexts, spec, settings);
  else
    check_contexts_local_mode(totals, sweep, contexts, spec, settings);
  return totals;
}

}  // namespace ncclbot::plugin_check
