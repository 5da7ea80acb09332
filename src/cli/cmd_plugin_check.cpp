// `ncclbot plugin-check --plugin PATH --sweep S --policy SPEC --seed N [--horizon T] [--ranks N]`:
// checks that the built tuner plugin, driven with the sweep, makes the replay engine's decisions
// call for call (local mode, or leader mode with --ranks; plugin_check/plugin_check.hpp). Exit 0 only
// when every decision is equal; 1 when any differs (each printed with context and step, and rank
// with --ranks) or a rank's process fails or hangs (named in the error). The library call:
// cli/plugin_check_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/plugin_check_call.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot::cli {
namespace plugin_check_command {

using plugin_check::arm_label;
using plugin_check::CheckTotals;
using plugin_check::Mismatch;

// The library call's options (cli/plugin_check_call.hpp), and what the command adds: how much to print.
struct PluginCheckOptions : PluginCheckCallOptions {
  int max_reports = 20;
  bool json = false;
};

// Declares plugin-check's options on `app`, in --help order, bound to `opt`.
void add_plugin_check_options(CLI::App& app, PluginCheckOptions& opt) {
  app.add_option("--plugin", opt.plugin_path, "path of libnccl-tuner-ncclbot.so")->required();
  app.add_option("--sweep", opt.sweep_path, "sweep CSV with prior_us (the cost table NCCL would pass)")
      ->required();
  app.add_option("--policy", opt.policy, "one policy spec, e.g. ucb1:c=0.5,n0=8")->required();
  app.add_option("--seed", opt.seed, "replay seed = NCCLBOT_SEED (default 0)");
  app.add_option("--horizon", opt.horizon, "calls per context (default 200)");
  app.add_option("--delay", opt.delay,
                 "feedback delay D: each call's latency is reported after the next D calls were decided "
                 "(default 0)");
  app.add_option("--nodes", opt.nodes, "only these node counts");
  app.add_option("--collectives", opt.collectives, "only these collectives");
  app.add_option("--feed", opt.feed,
                 "how latencies go back: profiler, report, or auto (profiler when ns timestamps carry the "
                 "value exactly, else report; default)")
      ->check(CLI::IsMember({"auto", "profiler", "report"}));
  app.add_option("--log", opt.log_path,
                 "have the plugin write its decision log here (NCCLBOT_LOG; a new file, docs/ope.md)");
  app.add_option(
      "--ranks", opt.ranks,
      "check leader mode in this many processes (2..64) on loopback, every rank's decisions against "
      "the replay of the leader's protocol (--as-deployed leader); default 1: local mode in this "
      "process");
  app.add_option("--rank-timeout", opt.rank_timeout,
                 "with --ranks: seconds one context's processes may take before the check fails, naming them "
                 "(default 300)");
  app.add_option("--plugin-env", opt.plugin_env,
                 "NAME=VALUE set for the plugin after plugin-check's own settings (repeatable; e.g. to see "
                 "that a plugin set up otherwise is caught)");
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
}

// "3,5..7": the ranks of mismatches [k, end), runs of consecutive ranks joined.
std::string mismatch_ranks(const std::vector<Mismatch>& mismatches, size_t k, size_t end) {
  std::string ranks;
  for (size_t r = k; r < end; ++r) {
    size_t run = r;
    while (run + 1 < end && mismatches[run + 1].rank == mismatches[run].rank + 1) ++run;
    ranks += (ranks.empty() ? "" : ",") + std::to_string(mismatches[r].rank) +
             (run > r ? ".." + std::to_string(mismatches[run].rank) : std::string());
    r = run;
  }
  return ranks;
}

// One line per context and first difference, at most `max_reports`; with --ranks the ranks that
// share it (all of them, when they agree with each other as they must) on that line.
void print_mismatches(const std::vector<Mismatch>& mismatches, const Sweep& sweep, int max_reports) {
  size_t printed = 0, groups = 0;
  for (size_t k = 0; k < mismatches.size();) {
    const Mismatch& m = mismatches[k];
    size_t end = k + 1;
    while (end < mismatches.size() && mismatches[end].context == m.context &&
           mismatches[end].step == m.step && mismatches[end].plugin_slot == m.plugin_slot &&
           mismatches[end].replay_slot == m.replay_slot)
      ++end;
    ++groups;
    if (int(printed) < max_reports) {
      const std::string ranks = mismatch_ranks(mismatches, k, end);
      const Context& ctx = sweep.context(m.context);
      command_err() << "MISMATCH context " << m.context << " (" << ctx.fabric << " "
                    << collective_name(ctx.collective) << " " << ctx.nodes << "x" << ctx.gpus_per_node << " "
                    << ctx.bytes << " B) "
                    << (m.rank >= 0 ? (end - k > 1 ? "ranks " : "rank ") + ranks + " " : std::string())
                    << "step " << m.step << ": plugin " << arm_label(sweep, m.context, m.plugin_slot)
                    << ", replay " << arm_label(sweep, m.context, m.replay_slot) << "\n";
      ++printed;
    }
    k = end;
  }
  if (groups > printed)
    command_err() << "plugin-check: " << (groups - printed) << " more mismatches not printed\n";
}

// The verdict line on stderr, and the decision log's name.
void print_check_summary(const CheckTotals& totals, const PolicySpec& spec, const PluginCheckOptions& opt,
                         bool equal) {
  const bool leader_mode = opt.ranks > 1;
  command_err() << "plugin-check " << spec.text << " seed " << opt.seed
                << (opt.delay ? " delay " + std::to_string(opt.delay) : std::string())
                << (leader_mode ? " leader mode, " + std::to_string(opt.ranks) + " processes" : std::string())
                << ": " << totals.checked << " contexts x " << opt.horizon << " calls, " << totals.steps
                << " decisions compared" << (leader_mode ? " (every rank's)" : "") << ", "
                << totals.differing.size() << " contexts differ";
  if (leader_mode) command_err() << ", ranks disagree on " << totals.rank_disagreements << " calls";
  command_err() << "; latencies fed via profiler " << totals.via_profiler << ", via report "
                << totals.via_report
                << (totals.not_joined ? ", NOT JOINED " + std::to_string(totals.not_joined) : std::string())
                << "; "
                << (equal                    ? "EQUAL"
                    : totals.failure.empty() ? "DIFFERENT"
                                             : "FAILED (a rank process, above)")
                << "\n";
  if (!opt.log_path.empty()) command_err() << "plugin-check: decision log " << opt.log_path << "\n";
}

// The command's work once the options are parsed: 0 when every decision is equal, else 1.
int run_plugin_check(const PluginCheckOptions& opt) {
  PluginCheckCallOptions call = opt;
  call.progress = !opt.json;
  const PluginCheckCallResult r = plugin_check_call(call);
  print_mismatches(r.totals.mismatches, r.sweep, opt.max_reports);
  print_check_summary(r.totals, r.spec, opt, r.equal);
  if (opt.json) command_out() << plugin_check_document(r, opt).dump() << "\n";
  return r.equal ? 0 : 1;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<PluginCheckOptions>();
  add_plugin_check_options(app, *opt);
  return [opt] { return run_plugin_check(*opt); };
}

const bool registered = register_command(
    {"plugin-check", "load the built tuner plugin as NCCL does and check its decisions equal the replay's",
     setup});

}  // namespace plugin_check_command
}  // namespace ncclbot::cli
