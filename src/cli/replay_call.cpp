#include "cli/replay_call.hpp"

#include <optional>

#include "base/progress_line.hpp"
#include "cli/replay_common.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/budget_check.hpp"
#include "ncclbot/supervised/supervised.hpp"

namespace ncclbot::cli {

ReplayPlan check_replay_call(const ReplayCallOptions& o) {
  ReplayPlan plan;
  if (o.budget && !(*o.budget >= 0.0 && *o.budget <= 10.0))
    throw UsageError("--budget must be a number in [0, 10]");
  plan.backend = resolve_replay_backend(parse_replay_backend(o.backend), command_err());
  if (!o.nodes.empty()) plan.filter.nodes = parse_node_list(o.nodes, "--nodes");
  if (!o.collectives.empty()) plan.filter.collectives = parse_collective_list(o.collectives, "--collectives");
  for (const auto& text : o.policies)
    for (auto& p : parse_policy_grid(text)) plan.configs.push_back(std::move(p));
  if (o.threads < 0) throw UsageError("--threads must be positive");
  check_replay_size(o.seeds, o.horizon);
  if (!o.raw_path.empty()) check_output_not_input(o.raw_path, {o.sweep_path}, "--raw");
  return plan;
}

PreparedReplayCall prepare_replay_call(const ReplayCallOptions& o, ReplayPlan& plan, const Sweep& sweep,
                                       int ranks_per_node) {
  plan.backend =
      backend_for_specs(parse_replay_backend(o.backend), plan.backend, plan.configs, command_err());
  PreparedReplayCall out;
  ReplayJob& job = out.job;
  job.sweep = &sweep;
  job.contexts = plan.filter.select_some(sweep, o.sweep_path);
  job.configs = plan.configs;
  job.seeds = o.seeds;
  job.seed_base = o.seed;
  job.horizon = o.horizon;
  o.feedback.apply_to(job);
  if (o.feedback.deployment()) job.call_cost_us = deployed_call_costs(job.configs);
  if (const auto charge = o.feedback.observation_charge())
    job.observation_cost = observation_costs(sweep, *charge);
  job.threads = replay_threads(o.threads, ranks_per_node);
  for (const PolicySpec& p : job.configs) {
    if (p.config.kind == PolicyKind::kAuto && !sweep.has_prior())
      throw InputError(o.sweep_path, 0, "policy 'auto' needs a prior_us column");
    job.fixed_slots.push_back(is_supervised(p.config.kind)
                                  ? supervised_decisions(p.config, sweep, job.contexts, true)
                                  : std::vector<int>{});
  }
  ReplayReport& report = out.report;
  report.backend = std::string(replay_backend_name(plan.backend));
  for (const PolicySpec& p : plan.configs) report.policies.push_back(p.text);
  report.contexts = job.contexts.size();
  set_replay_setup(report, job, o.feedback.as_deployed);
  report.call_cost_us = job.call_cost_us;
  if (const auto charge = o.feedback.observation_charge())
    report.observation = describe_observation_charge(*charge);
  return out;
}

ReplayCallResult replay_call(const ReplayCallOptions& o) {
  ReplayPlan plan = check_replay_call(o);
  const Sweep sweep = read_sweep_csv(o.sweep_path);
  PreparedReplayCall prepared = prepare_replay_call(o, plan, sweep, 1);
  ReplayJob& job = prepared.job;
  ReplayCallResult out;
  out.report = std::move(prepared.report);
  // Rows go to a temporary that becomes the raw file only once the replay is complete: a killed run
  // leaves no CSV that looks whole but lacks rows.
  std::optional<OutputFile> raw;
  if (!o.raw_path.empty()) {
    raw.emplace(o.raw_path, "--raw");
    raw->stream() << "config,policy,context,seed,online_loss,final_loss,final_slot\n";
    job.raw = &raw->stream();
  }
  ProgressLine progress("replay", job.configs.size() * job.contexts.size());
  job.progress = &progress;
  out.results = run_replay(job, plan.backend);
  progress.finish();
  if (raw) raw->commit();
  if (o.budget) {
    out.report.budget_alpha = o.budget;
    out.report.budget = check_budget(job, *o.budget);
  }
  return out;
}

}  // namespace ncclbot::cli
