// `ncclbot ope`: off-policy evaluation from the plugin's decision logs (docs/ope.md). For each
// target policy, IPS, SNIPS and DR estimates of its mean latency per logged call with bootstrap
// intervals and the effective sample size; with --sweep, the truth from the full forced-arm sweep
// beside them.
#include <CLI/CLI.hpp>
#include <charconv>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/block_bootstrap_options.hpp"
#include "cli/command.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/json_numbers.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/log_blocks.hpp"
#include "ncclbot/ope/off_policy.hpp"
#include "ncclbot/ope/replay_method.hpp"
#include "ncclbot/ope/target_policy.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/decision_table.hpp"

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

// The sweep context of each logged context (collective, bytes, nodes, GPUs per node).
std::vector<int> sweep_contexts(const LogBlocks& data, const Sweep& sweep, const std::string& path) {
  std::map<std::tuple<int, uint64_t, int, int>, int> index;
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    const Context& ctx = sweep.context(c);
    index[{int(ctx.collective), ctx.bytes, ctx.nodes, ctx.gpus_per_node}] = c;
  }
  std::vector<int> out;
  for (const OpeContext& c : data.contexts) {
    const int gpn = c.nodes > 0 ? int(c.ranks / c.nodes) : int(c.ranks);
    const auto it = index.find({c.collective, c.bytes, int(c.nodes), gpn});
    if (it == index.end())
      throw InputError(path, 0,
                       "holds no context of the log's collective " + std::to_string(c.collective) + ", " +
                           std::to_string(c.bytes) + " B, " + std::to_string(c.nodes) + "x" +
                           std::to_string(gpn));
    out.push_back(it->second);
  }
  return out;
}

// Per logged context and arm, the sum over its logged calls t of what the sweep's call dynamics
// multiply the arm's mean by at call t: level_t[a] x job_warm(t) (core/call_dynamics.hpp), with the
// change points of the replay stream plugin-check drove the plugin with (the log's seed, the sweep
// context's stream id; call t of a context is logged as its call index t). The calls' count where
// the sweep has no dynamics. Arm warm-up depends on the target's own plays, so under it there is no
// truth to give; a first-use cost is charged to a choice's loss, never to a measured latency.
std::vector<std::array<double, kNumArms>> logged_level_sums(const LogBlocks& data, const Sweep& sweep,
                                                            const std::vector<int>& where,
                                                            const std::string& path) {
  const SweepView v = sweep.view();
  std::vector<std::array<double, kNumArms>> out(data.contexts.size());
  for (size_t x = 0; x < data.contexts.size(); ++x) out[x].fill(double(data.blocks[x].calls));
  if (!v.dynamic()) return out;
  const CallDynamics& d = v.dynamics;
  if (d.arm_warmup > 0.0f && d.arm_warmup_calls > 0)
    throw InputError(path, 0,
                     "has arm warm-up, which depends on the target's own plays: no truth for a target");
  // The plugin writes the seed as a decimal number; anything else is no seed to replay with.
  std::string seed_text;
  if (!data.files.empty())
    if (const auto it = data.files.front().header.find("seed"); it != data.files.front().header.end())
      seed_text = it->second;
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(seed_text.data(), seed_text.data() + seed_text.size(), seed);
  if (seed_text.empty() || error != std::errc() || end != seed_text.data() + seed_text.size())
    throw InputError(path, 0, "has call dynamics, and the log's header gives no seed to replay them with");
  for (size_t x = 0; x < data.contexts.size(); ++x) {
    const ContextBlocks& b = data.blocks[x];
    const uint64_t id = context_stream_id(sweep.context(where[x]));
    uint64_t covered = 0;
    for (size_t j = 0; j < b.blocks(); ++j) covered += b.last_index[j] - b.first_index[j] + 1;
    if (covered != b.calls)
      throw InputError(path, 0,
                       "has call dynamics, and the log misses calls of " +
                           ope_context_text(data.contexts[x]) + " (" + std::to_string(b.calls) +
                           " logged between its first and last of " + std::to_string(covered) +
                           "): the truth needs each logged call's level");
    out[x].fill(0.0);
    uint32_t shifts = 0, next = d.shifts() ? shift_gap(d, seed, id, 0) : 0xffffffffu;
    double level[kNumArms];
    std::fill(std::begin(level), std::end(level), 1.0);
    for (size_t j = 0; j < b.blocks(); ++j)
      for (uint64_t t = b.first_index[j]; t <= b.last_index[j]; ++t) {
        while (uint64_t(next) <= t) {
          ++shifts;
          shifted_best_cost(d, v.mean_us + int64_t(where[x]) * kNumArms, v.mask(where[x]), seed, id, shifts,
                            level);
          next = next_change_point(d, seed, id, shifts, next);
        }
        const double warm =
            warm_factor(d.job_warmup, d.job_warmup_calls, uint32_t(std::min<uint64_t>(t, 0xffffffffu)));
        for (int s = 0; s < kNumArms; ++s)
          if (v.mask(where[x]).has(s)) out[x][size_t(s)] += level[s] * warm;
      }
  }
  return out;
}

// The truth: the sum over logged calls of pi(a | x) times the sweep's mean of (x, a) times the
// call's level (logged_level_sums), over n; `where` is sweep_contexts().
double truth_us(const LogBlocks& data, const TargetProbabilities& pi, const SweepView& v,
                const std::vector<int>& where, const std::vector<std::array<double, kNumArms>>& levels,
                const std::string& path) {
  double sum = 0;
  for (size_t x = 0; x < data.contexts.size(); ++x)
    for (int s = 0; s < kNumArms; ++s) {
      if (pi[x][size_t(s)] <= 0.0) continue;
      if (!v.mask(where[x]).has(s))
        throw InputError(
            path, 0,
            "has no measurement of an arm the target plays (context " + std::to_string(where[x]) + ")");
      sum += pi[x][size_t(s)] * v.mean(where[x], s) * levels[x][size_t(s)];
    }
  return sum / double(data.calls);
}

// The sweep's means and samples of the logged contexts, for the replay method's truth.
ReplayTruthInputs replay_truth_inputs(const LogBlocks& data, const SweepView& v,
                                      const std::vector<int>& where) {
  ReplayTruthInputs in;
  in.arm_mean.resize(data.contexts.size());
  in.samples.resize(data.contexts.size());
  for (size_t x = 0; x < data.contexts.size(); ++x) {
    in.arm_mean[x].fill(NAN);
    in.samples[x].resize(kNumArms);
    for (int s = 0; s < kNumArms; ++s) {
      if (!v.mask(where[x]).has(s)) continue;
      in.arm_mean[x][size_t(s)] = v.mean(where[x], s);
      for (int r = 0; r < v.samples; ++r) in.samples[x][size_t(s)].push_back(v.sample(where[x], s, r));
    }
  }
  return in;
}

// `table:FILE`: what the plugin in table mode would play in each logged context, decided by the
// plugin's own table code (plugin/decision_table.hpp): the first matching row whose arm NCCL
// offered, else NCCL's pick.
TargetProbabilities table_target(const std::string& path, const LogBlocks& data) {
  plugin::DecisionTable table;
  std::string error;
  if (!table.load_file(path, "", &error)) throw UsageError("--policy table:" + path + ": " + error);
  TargetProbabilities pi(data.contexts.size());
  for (size_t x = 0; x < data.contexts.size(); ++x) {
    const OpeContext& c = data.contexts[x];
    const plugin::CallKey key{c.collective, c.bytes, int(c.nodes), int(c.ranks), plugin::kAny, plugin::kAny};
    const auto rows = table.rows_for(int(c.nodes), int(c.ranks));
    const plugin::DecisionRow* row = plugin::deciding_row(rows, key, [&](int s) { return c.mask.has(s); });
    const int slot =
        row == nullptr || row->algo == plugin::kAny ? c.nccl_slot : row->algo * kNumProtos + row->proto;
    pi[x].fill(0.0);
    if (slot >= 0) pi[x][size_t(slot)] = 1.0;
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
  }
  return targets;
}

// With --sweep: where each logged context is in it, and (made once, on the first learning
// target) what the replay method's truth draws from.
struct SweepTruth {
  std::optional<Sweep> sweep;
  std::vector<int> where;
  std::vector<std::array<double, kNumArms>> levels;
  std::optional<ReplayTruthInputs> replay_truth;
};

// Reads --sweep, if given, and finds the logged contexts and their calls' levels in it.
SweepTruth read_sweep_truth(const OpeCliOptions& opt, const LogBlocks& data) {
  SweepTruth truth;
  if (!opt.sweep_path.empty()) {
    truth.sweep = read_sweep_csv(opt.sweep_path);
    truth.where = sweep_contexts(data, *truth.sweep, opt.sweep_path);
    truth.levels = logged_level_sums(data, *truth.sweep, truth.where, opt.sweep_path);
  }
  return truth;
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
  size_t dropped = 0;
  nlohmann::json files = nlohmann::json::array();
  for (const DecisionLogFile& f : data.files) {
    files.push_back({{"path", f.path}, {"calls", f.calls}, {"dropped_tail_bytes", f.dropped_tail_bytes}});
    dropped += f.dropped_tail_bytes;
  }
  doc["files"] = files;
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
     << " contexts"
     << (dropped ? ", " + std::to_string(dropped) + " bytes of a partial last record dropped" : "")
     << (data.graph_replays ? ", " + std::to_string(data.graph_replays) + " CUDA-graph replays left out" : "")
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
    if (truth.sweep && truth.sweep->view().dynamic()) {
      // The truth draws the target's latencies from the samples, without the levels.
      e["truth_note"] = "not computed: the sweep has call dynamics";
      os << "  truth not computed (call dynamics)";
    } else if (truth.sweep) {
      if (!truth.replay_truth)
        truth.replay_truth = replay_truth_inputs(data, truth.sweep->view(), truth.where);
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
      spec ? stationary_target(*spec, data.contexts) : table_target(table.substr(6), data);
  const auto estimates = estimate_off_policy(data, pi, "--policy " + name, options);
  nlohmann::json entry;
  entry["policy"] = name;
  os << "  " << name;
  if (truth.sweep) {
    const double t = truth_us(data, pi, truth.sweep->view(), truth.where, truth.levels, opt.sweep_path);
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
  SweepTruth truth = read_sweep_truth(opt, data);
  const OpeOptions options{opt.resamples, opt.seed, opt.level, opt.blocks.threads, backend};
  // The replay method for every live target at once: one more pass over the logs.
  std::vector<PolicySpec> live;
  for (const auto& [table, spec] : targets)
    if (spec) live.push_back(*spec);
  const std::vector<ReplayMethodOutcome> replays = replay_methods(opt.logs, data, live, opt.seed, opt.level);
  size_t next_replay = 0;

  std::ostream& os = opt.json ? std::cerr : std::cout;
  nlohmann::json doc = describe_ope_logs(opt, data, rule, os);
  for (const OpeTarget& target : targets) {
    const ReplayMethodOutcome* replay = target.second ? &replays[next_replay++] : nullptr;
    nlohmann::json entry = evaluate_ope_target(target, replay, opt, data, options, truth, os);
    doc["policies"].push_back(std::move(entry));
  }
  if (const std::string at = first_non_finite(doc); !at.empty())
    throw InputError(opt.logs.front(), 0, "ope's " + at + " is not finite; no estimate printed");
  if (opt.json) std::cout << doc.dump(2) << "\n";
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
