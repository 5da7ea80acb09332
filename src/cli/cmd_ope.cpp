// `ncclbot ope`: off-policy evaluation from the plugin's decision logs (docs/ope.md). For each
// target policy, IPS, SNIPS and DR estimates of its mean latency per logged call with bootstrap
// intervals and the effective sample size; with --sweep, the truth from the full forced-arm sweep
// beside them.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/block_bootstrap_options.hpp"
#include "cli/command.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/json_numbers.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/log_blocks.hpp"
#include "ncclbot/ope/off_policy.hpp"
#include "ncclbot/ope/replay_method.hpp"
#include "ncclbot/ope/sweep_truth.hpp"
#include "ncclbot/ope/target_policy.hpp"
#include "plugin/decision_table_file.hpp"

namespace ncclbot::cli {
namespace ope_command {

struct OpeCliOptions {
  std::vector<std::string> logs, policies;
  std::string sweep_path;
  int resamples = 999;
  uint64_t seed = 0;
  double level = 0.95;
  BlockBootstrapOptions blocks;
  bool json = false;
};

// `table:FILE`: what the plugin in table mode would play in each logged context, decided by the
// plugin's own table code (table/decision_table.hpp): the first matching row whose arm NCCL
// offered, with its channels and chunk size, else NCCL's pick. UsageError when that arm is none of
// the log's (a row's channels or chunk size over a slot log, or off a knob log's lists): no call of
// the log can stand for it.
TargetProbabilities table_target(const std::string& path, const LogBlocks& data) {
  plugin::DecisionTable table;
  std::string error;
  if (!plugin::load_decision_table(path, "", &table, &error))
    throw UsageError("--policy table:" + path + ": " + error);
  TargetProbabilities pi(data.contexts.size());
  for (size_t x = 0; x < data.contexts.size(); ++x) {
    const OpeContext& c = data.contexts[x];
    const plugin::CallKey key{c.collective, c.bytes, int(c.nodes), int(c.ranks), plugin::kAny, plugin::kAny};
    const auto rows = table.rows_for(int(c.nodes), int(c.ranks));
    const plugin::DecisionRow* row = plugin::deciding_row(rows, key, [&](int s) { return c.mask.has(s); });
    pi[x].assign(data.arms.size(), 0.0);
    if (row == nullptr || row->algo == plugin::kAny) {
      if (c.nccl_slot >= 0) pi[x][size_t(data.arms.index(Arm::of_slot(c.nccl_slot)))] = 1.0;
      continue;
    }
    const Arm arm{Algo(row->algo), Proto(row->proto), uint16_t(row->channels > 0 ? row->channels : 0),
                  uint32_t(row->chunk_bytes)};
    const int i = data.arms.index(arm);
    if (i < 0)
      throw UsageError("--policy table:" + path + ": line " + std::to_string(row->line) + " plays " +
                       logged_arm_text(arm) + " on " + ope_context_text(c) +
                       ", which is none of the log's arms" +
                       (data.arms.knob_log() ? " (its knobs line: " + data.arms.knobs + ")"
                                             : " (a slot log: NCCL's own channels and chunk size)"));
    pi[x][size_t(i)] = 1.0;
  }
  return pi;
}

// Declares ope's options on `app`, in --help order, bound to `opt`.
void add_ope_options(CLI::App& app, OpeCliOptions& opt) {
  app.add_option("--log", opt.logs, "decision log(s) written by the plugin (NCCLBOT_LOG, plugin-check --log)")
      ->required();
  app.add_option("--policy", opt.policies,
                 "target: auto, a policy spec evaluated stationary, or table:FILE (repeatable)")
      ->required();
  app.add_option("--sweep", opt.sweep_path,
                 "forced-arm sweep of the logged contexts: print the truth beside");
  app.add_option("--resamples", opt.resamples, "bootstrap resamples (default 999)");
  app.add_option("--seed", opt.seed, "bootstrap seed (default 0)");
  app.add_option("--level", opt.level, "interval level (default 0.95)");
  opt.blocks.add_to(app);
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
}

// A target: (table:FILE, no spec) for an exported decision table, else ("", the policy spec).
using OpeTarget = std::pair<std::string, std::optional<PolicySpec>>;

// Checks the bootstrap settings and parses the targets, before any log is read.
std::vector<OpeTarget> parse_ope_targets(const OpeCliOptions& opt) {
  if (opt.resamples < 1 || opt.resamples > 1000000) throw UsageError("--resamples must be in [1, 1000000]");
  if (!(opt.level > 0.0 && opt.level < 1.0)) throw UsageError("--level must be in (0, 1)");
  // A target is a policy spec or table:FILE (an exported decision table).
  std::vector<OpeTarget> targets;
  for (const std::string& p : opt.policies) {
    if (p.rfind("table:", 0) == 0)
      targets.emplace_back(p, std::nullopt);
    else
      targets.emplace_back("", parse_policy_spec(p));
    if (targets.back().second) {
      if (const std::string why = replay_only_modifier(*targets.back().second); !why.empty())
        throw UsageError("--policy: " + why);
    }
  }
  return targets;
}

// The document's description of the logs, with its "policies" still empty; the same said in one
// line on `os`.
nlohmann::json describe_ope_logs(const OpeCliOptions& opt, const LogBlocks& data, const BlockRule& rule,
                                 std::ostream& os) {
  nlohmann::json doc;
  doc["calls"] = data.calls;
  doc["contexts"] = data.contexts.size();
  doc["behaviour"] = data.behaviour;
  doc["graph_replays"] = data.graph_replays;
  if (data.arms.knob_log()) {  // a knob log: its arms (ope/logged_arms.hpp)
    doc["knobs"] = data.arms.knobs;
    doc["arms"] = data.arms.size();
    doc["knob_calls"] = data.knob_calls;
  }
  size_t dropped = 0;
  nlohmann::json files = nlohmann::json::array();
  for (const DecisionLogFile& f : data.files) {
    files.push_back({{"path", f.path},
                     {"calls", f.calls},
                     {"dropped_tail_bytes", f.dropped_tail_bytes},
                     {"skipped_latencies", f.skipped_latencies},
                     {"overridden_calls", f.overridden},
                     {"symmetric_calls", f.symmetric}});
    dropped += f.dropped_tail_bytes;
  }
  doc["files"] = files;
  const size_t skipped = skipped_latencies(data.files);
  doc["skipped_latencies"] = skipped;
  const size_t overridden = overridden_calls(data.files);
  doc["overridden_calls"] = overridden;
  doc["symmetric_calls"] = symmetric_calls(data.files);  // of the overridden: NCCL's symmetric kernels
  doc["level"] = opt.level;
  doc["resamples"] = opt.resamples;
  doc["block_rule"] = data.rule.describe();
  uint64_t shortest = UINT64_MAX, longest = 0;
  for (const ContextBlocks& b : data.blocks)
    if (b.calls > 0) {
      shortest = std::min(shortest, b.length);
      longest = std::max(longest, b.length);
    }
  doc["block_length"] = {shortest, longest};
  doc["policies"] = nlohmann::json::array();
  os << "ope: " << data.calls << " logged calls of '" << data.behaviour << "' over " << data.contexts.size()
     << " contexts" << (data.arms.knob_log() ? " over knob arms (" + data.arms.knobs + ")" : std::string())
     << (dropped ? ", " + std::to_string(dropped) + " bytes of a partial last record dropped" : "")
     << (data.graph_replays ? ", " + std::to_string(data.graph_replays) + " CUDA-graph replays left out" : "")
     << (skipped ? ", " + skipped_latencies_text(skipped) : "")
     << (overridden ? ", " + overridden_calls_text(overridden, symmetric_calls(data.files)) : "")
     << "; mean latency per call (us), " << opt.level * 100 << "% block bootstrap intervals, blocks of "
     << (shortest == longest ? std::to_string(shortest)
                             : std::to_string(shortest) + "-" + std::to_string(longest))
     << " calls (--block-length " << rule.text() << ")\n";
  return doc;
}

// A learning target's replay-method estimate, where the log allows one, with its truth where the
// sweep gives one: printed on `os` and added to the target's `entry`.
void add_replay_method_estimate(nlohmann::json& entry, const ReplayMethodOutcome& outcome,
                                const PolicySpec& spec, const OpeCliOptions& opt, const LogBlocks& data,
                                SweepTruth& truth, std::ostream& os) {
  const std::optional<ReplayMethodResult>& rm = outcome.result;
  if (!rm) {
    entry["replay_method_unavailable"] = outcome.unavailable;
    os << "    replay not available: " << outcome.unavailable << "\n";
  }
  if (rm) {
    nlohmann::json e{{"name", "replay"},         {"value_us", rm->value_us},
                     {"ci", {rm->lo, rm->hi}},   {"n_effective", double(rm->accepted)},
                     {"accepted", rm->accepted}, {"acceptance_rate", rm->acceptance_rate}};
    os << "    replay " << std::fixed << std::setprecision(3) << rm->value_us << "  [" << rm->lo << ", "
       << rm->hi << "]  accepted " << rm->accepted << " of " << rm->calls << " (" << std::setprecision(1)
       << 100.0 * rm->acceptance_rate << "%)";
    if (truth.sweep && truth.sweep->arm_view().dynamic()) {
      // The truth draws the target's latencies from the samples, without the levels.
      e["truth_note"] = "not computed: the sweep has call dynamics";
      os << "  truth not computed (call dynamics)";
    } else if (truth.sweep) {
      if (!truth.replay_truth) truth.replay_truth = replay_truth_inputs(data, truth);
      const double t = replay_method_truth(data, spec, *rm, *truth.replay_truth, 200, opt.seed);
      e["truth_us"] = t;
      os << "  truth " << std::setprecision(3) << t;
    }
    os << "\n";
    entry["estimators"].push_back(e);
  }
}

// One target's estimates (IPS, SNIPS, DR and, for a learning target, the replay method's from
// `replay`), printed on `os` and returned as its entry of the document.
nlohmann::json evaluate_ope_target(const OpeTarget& target, const ReplayMethodOutcome* replay,
                                   const OpeCliOptions& opt, const LogBlocks& data, const OpeOptions& options,
                                   SweepTruth& truth, std::ostream& os) {
  const auto& [table, spec] = target;
  const std::string name = spec ? spec->text : table;
  const TargetProbabilities pi =
      spec ? stationary_target(*spec, data.contexts, data.arms) : table_target(table.substr(6), data);
  const auto estimates = estimate_off_policy(data, pi, "--policy " + name, options);
  nlohmann::json entry;
  entry["policy"] = name;
  os << "  " << name;
  if (truth.sweep) {
    const double t = truth_us(data, pi, truth, opt.sweep_path);
    entry["truth_us"] = t;
    os << "  truth " << std::fixed << std::setprecision(3) << t;
  }
  os << "\n";
  entry["estimators"] = nlohmann::json::array();
  for (const EstimatorResult& e : estimates) {
    entry["estimators"].push_back(
        {{"name", e.name}, {"value_us", e.value_us}, {"ci", {e.lo, e.hi}}, {"n_effective", e.n_effective}});
    os << "    " << std::left << std::setw(6) << e.name << std::right << std::fixed << std::setprecision(3)
       << e.value_us << "  [" << e.lo << ", " << e.hi << "]  n_effective " << std::setprecision(1)
       << e.n_effective << "\n";
  }
  // learning over the whole log: the replay method, where the log allows it
  if (spec) add_replay_method_estimate(entry, *replay, *spec, opt, data, truth, os);
  return entry;
}

// The command's work once the options are parsed: every target's estimates, as text or JSON.
int run_ope(const OpeCliOptions& opt) {
  const std::vector<OpeTarget> targets = parse_ope_targets(opt);
  const BlockRule rule = opt.blocks.rule();
  const ResampleBackend backend = opt.blocks.resample_backend();
  const LogBlocks data = read_log_blocks(opt.logs, rule);
  SweepTruth truth = read_sweep_truth(opt.sweep_path, data);
  const OpeOptions options{opt.resamples, opt.seed, opt.level, opt.blocks.threads, backend};
  // The replay method for every live target at once: one more pass over the logs.
  std::vector<PolicySpec> live;
  for (const auto& [table, spec] : targets)
    if (spec) live.push_back(*spec);
  const std::vector<ReplayMethodOutcome> replays = replay_methods(opt.logs, data, live, opt.seed, opt.level);
  size_t next_replay = 0;

  std::ostream& os = opt.json ? command_err() : command_out();
  nlohmann::json doc = describe_ope_logs(opt, data, rule, os);
  for (const OpeTarget& target : targets) {
    const ReplayMethodOutcome* replay = target.second ? &replays[next_replay++] : nullptr;
    nlohmann::json entry = evaluate_ope_target(target, replay, opt, data, options, truth, os);
    doc["policies"].push_back(std::move(entry));
  }
  if (const std::string at = first_non_finite(doc); !at.empty())
    throw InputError(opt.logs.front(), 0, "ope's " + at + " is not finite; no estimate printed");
  if (opt.json) command_out() << doc.dump(2) << "\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<OpeCliOptions>();
  add_ope_options(app, *opt);
  return [opt] { return run_ope(*opt); };
}

const bool registered = register_command(
    {"ope", "off-policy evaluation of target policies from the plugin's decision logs (IPS, SNIPS, DR)",
     setup});

}  // namespace ope_command
}  // namespace ncclbot::cli
