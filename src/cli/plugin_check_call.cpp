#include "cli/plugin_check_call.hpp"

#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot::cli {
namespace {

// Checks the options against each other and parses the policy, which must be one that runs
// inside NCCL.
PolicySpec check_plugin_check_options(const PluginCheckCallOptions& opt) {
  if (opt.horizon < 1) throw UsageError("--horizon must be at least 1");
  if (opt.delay < 0 || opt.delay > kMaxReplayDelay)
    throw UsageError("--delay must be in [0, " + std::to_string(kMaxReplayDelay) + "]");
  if (opt.ranks < 1 || opt.ranks > plugin_check::kMaxCheckRanks)
    throw UsageError("--ranks must be in [1, " + std::to_string(plugin_check::kMaxCheckRanks) + "]");
  const bool leader_mode = opt.ranks > 1;
  if (leader_mode && opt.delay != 0)
    throw UsageError(
        "--delay applies to local mode; with --ranks the delay is the leader protocol's (the replay's "
        "--as-deployed leader)");
  if (leader_mode && opt.feed == "profiler")
    throw UsageError("--ranks reports latencies through ncclbotReportLatency (--feed report or auto)");
  if (leader_mode && !opt.log_path.empty())
    throw UsageError("--log applies to local mode (with --ranks every context is a job of its own)");
  if (!(opt.rank_timeout > 0.0)) throw UsageError("--rank-timeout must be positive");
  for (const std::string& a : opt.plugin_env)
    if (a.find('=') == std::string::npos || a.find('=') == 0)
      throw UsageError("--plugin-env " + a + ": expected NAME=VALUE");
  const PolicySpec spec = parse_policy_spec(opt.policy);
  if (const std::string why = replay_only_modifier(spec); !why.empty()) throw UsageError("--policy: " + why);
  if (policy_use(spec.config.kind) != PolicyUse::kLive)
    throw UsageError("--policy " + opt.policy + ": " + std::string(policy_name(spec.config.kind)) +
                     " cannot run inside NCCL (it needs the sweep's ground truth or a fitted model); its "
                     "decisions ship as a table (NCCLBOT_MODE=table)");
  return spec;
}

}  // namespace

PluginCheckCallResult plugin_check_call(const PluginCheckCallOptions& opt) {
  PluginCheckCallResult r;
  r.spec = check_plugin_check_options(opt);
  ContextFilter filter;
  if (!opt.nodes.empty()) filter.nodes = parse_node_list(opt.nodes, "--nodes");
  if (!opt.collectives.empty()) filter.collectives = parse_collective_list(opt.collectives, "--collectives");
  r.sweep = read_sweep_csv(opt.sweep_path);
  if (!r.sweep.has_prior())
    throw InputError(opt.sweep_path, 0,
                     "needs a prior_us column: it is the cost table NCCL passes the plugin");
  const std::vector<int> contexts = filter.select_some(r.sweep, opt.sweep_path);
  r.totals = plugin_check::check_plugin(opt, r.sweep, contexts, r.spec);
  r.equal = r.totals.mismatches.empty() && r.totals.checked > 0 && r.totals.not_joined == 0 &&
            r.totals.failure.empty();
  return r;
}

nlohmann::json plugin_check_document(const PluginCheckCallResult& r, const PluginCheckCallOptions& opt) {
  nlohmann::json j;
  j["policy"] = r.spec.text;
  j["seed"] = opt.seed;
  j["horizon"] = opt.horizon;
  j["delay"] = opt.delay;
  j["ranks"] = opt.ranks;
  j["contexts"] = r.totals.checked;
  j["skipped"] = r.totals.skipped;
  j["decisions"] = r.totals.steps;
  j["via_profiler"] = r.totals.via_profiler;
  j["via_report"] = r.totals.via_report;
  j["not_joined"] = r.totals.not_joined;
  if (opt.ranks > 1) j["rank_disagreements"] = r.totals.rank_disagreements;
  j["equal"] = r.equal;
  if (!r.totals.failure.empty()) j["error"] = r.totals.failure;
  if (!opt.log_path.empty()) j["log"] = opt.log_path;
  nlohmann::json list = nlohmann::json::array();
  for (const plugin_check::Mismatch& m : r.totals.mismatches) {
    nlohmann::json e = {{"context", m.context},
                        {"step", m.step},
                        {"plugin", plugin_check::arm_label(r.sweep, m.context, m.plugin_slot)},
                        {"replay", plugin_check::arm_label(r.sweep, m.context, m.replay_slot)}};
    if (m.rank >= 0) e["rank"] = m.rank;
    list.push_back(e);
  }
  j["mismatches"] = list;
  return j;
}

}  // namespace ncclbot::cli
