#include "cli/tune_call.hpp"

#include "base/progress_line.hpp"
#include "cli/replay_common.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/deployed/deployed_cost.hpp"
#include "ncclbot/io/sweep_csv.hpp"

namespace ncclbot::cli {

TuneFilters check_tune_call(const TuneCallOptions& o, TuneRequest& req) {
  req.backend = resolve_replay_backend(parse_replay_backend(o.backend), command_err());
  req.objective = parse_tune_objective(o.objective);
  TuneFilters filters;
  filters.tune.nodes = parse_node_list(o.tune_nodes, "--tune-nodes");
  filters.score.nodes = parse_node_list(o.score_nodes, "--score-nodes");
  if (!o.collectives.empty())
    filters.tune.collectives = filters.score.collectives =
        parse_collective_list(o.collectives, "--collectives");
  for (const auto& g : o.policies) parse_policy_grid(g);  // usage errors before reading the sweep
  if (o.threads < 0) throw UsageError("--threads must be positive");
  check_replay_size(o.seeds, o.horizon);
  return filters;
}

void fill_tune_request(TuneRequest& req, const TuneCallOptions& o, const Sweep& sweep,
                       const TuneFilters& filters, int ranks_per_node) {
  req.sweep = &sweep;
  req.grids = o.policies;
  req.tune_contexts = filters.tune.select(sweep);
  req.score_contexts = filters.score.select(sweep);
  req.seeds = o.seeds;
  req.seed_base = o.seed;
  req.horizon = o.horizon;
  o.feedback.apply_to(req);
  req.charge_call_costs = o.feedback.deployment().has_value();
  req.observation = o.feedback.observation_charge();
  req.threads = replay_threads(o.threads, ranks_per_node);
}

TuneReport tune_report_setup(const TuneCallOptions& o, const TuneRequest& req) {
  TuneReport report;
  report.backend = std::string(replay_backend_name(req.backend));
  report.objective = std::string(tune_objective_name(req.objective));
  report.tune_nodes = o.tune_nodes;
  report.score_nodes = o.score_nodes;
  report.tune_contexts = req.tune_contexts.size();
  report.score_contexts = req.score_contexts.size();
  set_replay_setup(report, req, o.feedback.as_deployed);
  if (req.charge_call_costs)
    for (const auto& g : o.policies) report.call_cost_us.push_back(deployed_call_cost_us(g));
  if (req.observation) report.observation = describe_observation_charge(*req.observation);
  return report;
}

std::vector<TunedPolicy> run_tune_phases(TuneRequest& req, bool show_progress) {
  size_t units = req.score_contexts.size() * req.grids.size();
  for (const auto& g : req.grids) units += parse_policy_grid(g).size() * req.tune_contexts.size();
  ProgressLine progress("tune", units, show_progress);
  req.progress = &progress;
  std::vector<TunedPolicy> tuned = tune_and_score(req);
  progress.finish();
  req.progress = nullptr;
  return tuned;
}

TuneCallResult tune_call(const TuneCallOptions& o) {
  TuneRequest req;
  const TuneFilters filters = check_tune_call(o, req);
  const Sweep sweep = read_sweep_csv(o.sweep_path);
  fill_tune_request(req, o, sweep, filters, 1);
  TuneCallResult out;
  out.report = tune_report_setup(o, req);
  out.tuned = run_tune_phases(req, true);
  return out;
}

}  // namespace ncclbot::cli
