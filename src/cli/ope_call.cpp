#include "cli/ope_call.hpp"

#include <algorithm>
#include <iomanip>
#include <optional>
#include <utility>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/json_numbers.hpp"
#include "ncclbot/ope/log_blocks.hpp"
#include "ncclbot/ope/sweep_truth.hpp"
#include "ncclbot/ope/target_policy.hpp"
#include "plugin/decision_table_file.hpp"

namespace ncclbot::cli {
namespace {

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

// A target: (table:FILE, no spec) for an exported decision table, else ("", the policy spec).
using OpeTarget = std::pair<std::string, std::optional<PolicySpec>>;

// Checks the bootstrap settings and parses the targets, before any log is read.
std::vector<OpeTarget> parse_ope_targets(const OpeCallOptions& opt) {
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

// What the logs hold, for the document and the summary line.
OpeLogSummary summarize_logs(const LogBlocks& data, const BlockRule& rule) {
  OpeLogSummary s;
  s.calls = data.calls;
  s.contexts = data.contexts.size();
  s.behaviour = data.behaviour;
  s.graph_replays = data.graph_replays;
  if (data.arms.knob_log()) {  // a knob log: its arms (ope/logged_arms.hpp)
    s.knobs = data.arms.knobs;
    s.arms = data.arms.size();
    s.knob_calls = data.knob_calls;
  }
  s.files = data.files;
  for (const DecisionLogFile& f : data.files) s.dropped_tail_bytes += f.dropped_tail_bytes;
  s.skipped_latencies = skipped_latencies(data.files);
  s.overridden_calls = overridden_calls(data.files);
  s.symmetric_calls = symmetric_calls(data.files);  // of the overridden: NCCL's symmetric kernels
  s.block_rule = data.rule.describe();
  s.block_rule_text = rule.text();
  s.shortest_block = UINT64_MAX;
  for (const ContextBlocks& b : data.blocks)
    if (b.calls > 0) {
      s.shortest_block = std::min(s.shortest_block, b.length);
      s.longest_block = std::max(s.longest_block, b.length);
    }
  return s;
}

// A learning target's replay-method estimate, where the log allows one, with its truth where the
// sweep gives one.
void add_replay_method_estimate(OpeTargetResult& t, const ReplayMethodOutcome& outcome,
                                const PolicySpec& spec, const OpeCallOptions& opt, const LogBlocks& data,
                                SweepTruth& truth) {
  t.learning = true;
  t.replay = outcome.result;
  if (!t.replay) {
    t.replay_unavailable = outcome.unavailable;
    return;
  }
  if (truth.sweep && truth.sweep->arm_view().dynamic()) {
    // The truth draws the target's latencies from the samples, without the levels.
    t.replay_truth_has_dynamics = true;
  } else if (truth.sweep) {
    if (!truth.replay_truth) truth.replay_truth = replay_truth_inputs(data, truth);
    t.replay_truth_us = replay_method_truth(data, spec, *t.replay, *truth.replay_truth, 200, opt.seed);
  }
}

// One target's estimates: IPS, SNIPS, DR and, for a learning target, the replay method's from `replay`.
OpeTargetResult evaluate_ope_target(const OpeTarget& target, const ReplayMethodOutcome* replay,
                                    const OpeCallOptions& opt, const LogBlocks& data,
                                    const OpeOptions& options, SweepTruth& truth) {
  const auto& [table, spec] = target;
  OpeTargetResult t;
  t.policy = spec ? spec->text : table;
  const TargetProbabilities pi =
      spec ? stationary_target(*spec, data.contexts, data.arms) : table_target(table.substr(6), data);
  t.estimators = estimate_off_policy(data, pi, "--policy " + t.policy, options);
  if (truth.sweep) t.truth_us = truth_us(data, pi, truth, opt.sweep_path);
  // learning over the whole log: the replay method, where the log allows it
  if (spec) add_replay_method_estimate(t, *replay, *spec, opt, data, truth);
  return t;
}

nlohmann::json target_json(const OpeTargetResult& t) {
  nlohmann::json entry;
  entry["policy"] = t.policy;
  if (t.truth_us) entry["truth_us"] = *t.truth_us;
  entry["estimators"] = nlohmann::json::array();
  for (const EstimatorResult& e : t.estimators)
    entry["estimators"].push_back(
        {{"name", e.name}, {"value_us", e.value_us}, {"ci", {e.lo, e.hi}}, {"n_effective", e.n_effective}});
  if (t.learning && !t.replay) entry["replay_method_unavailable"] = t.replay_unavailable;
  if (t.replay) {
    const ReplayMethodResult& rm = *t.replay;
    nlohmann::json e{{"name", "replay"},        {"value_us", rm.value_us},
                     {"ci", {rm.lo, rm.hi}},    {"n_effective", double(rm.accepted)},
                     {"accepted", rm.accepted}, {"acceptance_rate", rm.acceptance_rate}};
    if (t.replay_truth_has_dynamics) e["truth_note"] = "not computed: the sweep has call dynamics";
    if (t.replay_truth_us) e["truth_us"] = *t.replay_truth_us;
    entry["estimators"].push_back(e);
  }
  return entry;
}

void print_target(const OpeTargetResult& t, std::ostream& os) {
  os << "  " << t.policy;
  if (t.truth_us) os << "  truth " << std::fixed << std::setprecision(3) << *t.truth_us;
  os << "\n";
  for (const EstimatorResult& e : t.estimators)
    os << "    " << std::left << std::setw(6) << e.name << std::right << std::fixed << std::setprecision(3)
       << e.value_us << "  [" << e.lo << ", " << e.hi << "]  n_effective " << std::setprecision(1)
       << e.n_effective << "\n";
  if (t.learning && !t.replay) os << "    replay not available: " << t.replay_unavailable << "\n";
  if (t.replay) {
    const ReplayMethodResult& rm = *t.replay;
    os << "    replay " << std::fixed << std::setprecision(3) << rm.value_us << "  [" << rm.lo << ", "
       << rm.hi << "]  accepted " << rm.accepted << " of " << rm.calls << " (" << std::setprecision(1)
       << 100.0 * rm.acceptance_rate << "%)";
    if (t.replay_truth_has_dynamics) os << "  truth not computed (call dynamics)";
    if (t.replay_truth_us) os << "  truth " << std::setprecision(3) << *t.replay_truth_us;
    os << "\n";
  }
}

}  // namespace

OpeCallResult ope_call(const OpeCallOptions& opt) {
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
  OpeCallResult r;
  r.logs = summarize_logs(data, rule);
  r.level = opt.level;
  r.resamples = opt.resamples;
  for (const OpeTarget& target : targets) {
    const ReplayMethodOutcome* replay = target.second ? &replays[next_replay++] : nullptr;
    r.targets.push_back(evaluate_ope_target(target, replay, opt, data, options, truth));
  }
  if (const std::string at = first_non_finite(ope_document(r)); !at.empty())
    throw InputError(opt.logs.front(), 0, "ope's " + at + " is not finite; no estimate printed");
  return r;
}

nlohmann::json ope_document(const OpeCallResult& r) {
  const OpeLogSummary& s = r.logs;
  nlohmann::json doc;
  doc["calls"] = s.calls;
  doc["contexts"] = s.contexts;
  doc["behaviour"] = s.behaviour;
  doc["graph_replays"] = s.graph_replays;
  if (!s.knobs.empty()) {
    doc["knobs"] = s.knobs;
    doc["arms"] = s.arms;
    doc["knob_calls"] = s.knob_calls;
  }
  nlohmann::json files = nlohmann::json::array();
  for (const DecisionLogFile& f : s.files)
    files.push_back({{"path", f.path},
                     {"calls", f.calls},
                     {"dropped_tail_bytes", f.dropped_tail_bytes},
                     {"skipped_latencies", f.skipped_latencies},
                     {"overridden_calls", f.overridden},
                     {"symmetric_calls", f.symmetric}});
  doc["files"] = files;
  doc["skipped_latencies"] = s.skipped_latencies;
  doc["overridden_calls"] = s.overridden_calls;
  doc["symmetric_calls"] = s.symmetric_calls;
  doc["level"] = r.level;
  doc["resamples"] = r.resamples;
  doc["block_rule"] = s.block_rule;
  doc["block_length"] = {s.shortest_block, s.longest_block};
  doc["policies"] = nlohmann::json::array();
  for (const OpeTargetResult& t : r.targets) doc["policies"].push_back(target_json(t));
  return doc;
}

void print_ope(const OpeCallResult& r, std::ostream& os) {
  const OpeLogSummary& s = r.logs;
  os << "ope: " << s.calls << " logged calls of '" << s.behaviour << "' over " << s.contexts << " contexts"
     << (!s.knobs.empty() ? " over knob arms (" + s.knobs + ")" : std::string())
     << (s.dropped_tail_bytes
             ? ", " + std::to_string(s.dropped_tail_bytes) + " bytes of a partial last record dropped"
             : "")
     << (s.graph_replays ? ", " + std::to_string(s.graph_replays) + " CUDA-graph replays left out" : "")
     << (s.skipped_latencies ? ", " + skipped_latencies_text(s.skipped_latencies) : "")
     << (s.overridden_calls ? ", " + overridden_calls_text(s.overridden_calls, s.symmetric_calls) : "")
     << "; mean latency per call (us), " << r.level * 100 << "% block bootstrap intervals, blocks of "
     << (s.shortest_block == s.longest_block
             ? std::to_string(s.shortest_block)
             : std::to_string(s.shortest_block) + "-" + std::to_string(s.longest_block))
     << " calls (--block-length " << s.block_rule_text << ")\n";
  for (const OpeTargetResult& t : r.targets) print_target(t, os);
}

}  // namespace ncclbot::cli
