// `ncclbot tune`: grid search on the tune contexts, freeze the best point of every policy, score
// it on the score contexts. Under mpirun (ncclbot-mpi) both replay phases are split across the
// ranks and rank 0 prints the same output as one process; without MPI, `--phase tune|score
// --shard I/N` runs one slice of one phase and `ncclbot merge` combines them (scale/tune_shards.hpp,
// docs/scale-out.md).
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/progress_line.hpp"
#include "cli/as_deployed.hpp"
#include "cli/command.hpp"
#include "cli/replay_common.hpp"
#include "cli/scale_cli.hpp"
#include "cli/tune_report.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/deployed/deployed_cost.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/tune_shards.hpp"
#include "ncclbot/tune/tune.hpp"

namespace ncclbot::cli {
namespace tune_command {

struct TuneOptions {
  std::string sweep_path;
  std::vector<std::string> policies;
  std::string tune_nodes = "4,8", score_nodes = "16,32", collectives;
  std::string objective = "mean";
  int seeds = 1;
  uint64_t seed = 0;
  int horizon = 0;
  FeedbackOptions feedback;  // --delay, --window, --as-deployed
  int threads = 0;
  std::string backend = "cpu";
  std::string phase, shard, choice_path, out_path;
  double rank_timeout = 0;
  bool json = false;
};

// One slice of one phase of a tune split over separate processes, written as a partial.
int run_tune_shard(const TuneOptions& opt, const TuneRequest& req, const TuneReport& report) {
  const ShardSpec shard = parse_shard(opt.shard);
  const std::string digest = sweep_digest(opt.sweep_path);
  const nlohmann::json setup =
      tune_setup_json(req, report.tune_nodes, report.score_nodes, report.as_deployed);
  const TuneShardPartial part = replay_tune_shard(req, opt.phase, shard, digest, setup, opt.choice_path);
  write_shard_partial(opt.out_path, part.bytes, shard, part.total_units, part.units, opt.json);
  return 0;
}

void check_shard_options(const TuneOptions& opt) {
  const bool sharded = !opt.shard.empty();
  if (!opt.phase.empty() && opt.phase != "tune" && opt.phase != "score")
    throw UsageError("--phase must be tune or score");
  if (sharded != !opt.phase.empty())
    throw UsageError("--shard and --phase go together: --phase tune --shard I/N, then --phase score");
  if (sharded && opt.out_path.empty()) throw UsageError("--shard needs --out FILE for the partial result");
  if (!sharded && !opt.out_path.empty()) throw UsageError("--out is only used with --shard");
  if ((opt.phase == "score") != !opt.choice_path.empty())
    throw UsageError(
        "--phase score needs --choice FILE (from `ncclbot merge` of the --phase tune partials), "
        "and --choice needs --phase score");
  if (sharded) parse_shard(opt.shard);
}

// Declares tune's options on `app`, in --help order, bound to `opt`.
void add_tune_options(CLI::App& app, TuneOptions& opt) {
  app.add_option("--sweep", opt.sweep_path, "sweep CSV")->required();
  app.add_option("--policy", opt.policies, "policy grid, e.g. ucb1:c=0.05|0.1|0.2,n0=0|4|16 (repeatable)")
      ->required();
  app.add_option("--tune-nodes", opt.tune_nodes, "node counts of the tune contexts (default 4,8)");
  app.add_option("--score-nodes", opt.score_nodes, "node counts of the score contexts (default 16,32)");
  app.add_option("--collectives", opt.collectives, "only these collectives");
  app.add_option("--objective", opt.objective, "mean, p99 or above_10pct of the online loss (default mean)");
  app.add_option("--seeds", opt.seeds, "replays per context and config")->required();
  app.add_option("--seed", opt.seed, "first seed (default 0)");
  app.add_option("--horizon", opt.horizon, "steps per replay (T)")->required();
  opt.feedback.add_to(app);
  app.add_option("--threads", opt.threads, "worker threads (0 or left out: all cores)");
  app.add_option("--backend", opt.backend, "cpu, cuda or auto (default cpu)");
  app.add_option("--phase", opt.phase, "with --shard: tune (grid points on the tune contexts) or score");
  app.add_option("--shard", opt.shard, "with --phase: run only slice I of N (0-based) and write a partial");
  app.add_option("--choice", opt.choice_path, "with --phase score: the choice `ncclbot merge` wrote");
  app.add_option("--out", opt.out_path, "with --shard: the partial result file for `ncclbot merge`");
  add_rank_timeout_option(app, opt.rank_timeout);
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
}

// The contexts of the two phases, as --tune-nodes, --score-nodes and --collectives select them.
struct TuneFilters {
  ContextFilter tune, score;
};

// Checks the options and parses everything that needs no sweep into `req` (backend, objective) and
// the filters it returns, so that usage errors come before the sweep is read.
TuneFilters check_tune_options(const TuneOptions& opt, TuneRequest& req) {
  check_shard_options(opt);
  req.backend = resolve_replay_backend(parse_replay_backend(opt.backend), command_err());
  req.objective = parse_tune_objective(opt.objective);
  TuneFilters filters;
  filters.tune.nodes = parse_node_list(opt.tune_nodes, "--tune-nodes");
  filters.score.nodes = parse_node_list(opt.score_nodes, "--score-nodes");
  if (!opt.collectives.empty())
    filters.tune.collectives = filters.score.collectives =
        parse_collective_list(opt.collectives, "--collectives");
  for (const auto& g : opt.policies) parse_policy_grid(g);  // usage errors before reading the sweep
  if (opt.threads < 0) throw UsageError("--threads must be positive");
  check_replay_size(opt.seeds, opt.horizon);
  if (!opt.out_path.empty()) check_output_not_input(opt.out_path, {opt.sweep_path, opt.choice_path}, "--out");
  return filters;
}

// The MPI ranks the tune is split over (null for one process), with --rank-timeout applied.
ProcessGroup* tune_process_group(const TuneOptions& opt) {
  ProcessGroup* group = process_group();
  if (group && group->size() == 1) group = nullptr;
  if (group && !opt.shard.empty())
    throw UsageError("--shard is for separate processes; under mpirun the ranks split the work");
  apply_rank_timeout(group, opt.rank_timeout);
  return group;
}

// Fills in the rest of the request: the sweep's contexts of each phase, the replay sizes, the
// feedback protocol and the threads.
void fill_tune_request(TuneRequest& req, const TuneOptions& opt, const Sweep& sweep,
                       const TuneFilters& filters, const ProcessGroup* group) {
  req.sweep = &sweep;
  req.grids = opt.policies;
  req.tune_contexts = filters.tune.select(sweep);
  req.score_contexts = filters.score.select(sweep);
  req.seeds = opt.seeds;
  req.seed_base = opt.seed;
  req.horizon = opt.horizon;
  opt.feedback.apply_to(req);
  req.charge_call_costs = opt.feedback.deployment().has_value();
  req.observation = opt.feedback.observation_charge();
  // Ranks on one node share its cores unless told otherwise.
  req.threads = replay_threads(opt.threads, group ? group->local_size() : 1);
}

// The report's setup fields, from the options and the filled request.
TuneReport tune_report_setup(const TuneOptions& opt, const TuneRequest& req) {
  TuneReport report;
  report.backend = std::string(replay_backend_name(req.backend));
  report.objective = std::string(tune_objective_name(req.objective));
  report.tune_nodes = opt.tune_nodes;
  report.score_nodes = opt.score_nodes;
  report.tune_contexts = req.tune_contexts.size();
  report.score_contexts = req.score_contexts.size();
  set_replay_setup(report, req, opt.feedback.as_deployed);
  if (req.charge_call_costs)
    for (const auto& g : opt.policies) report.call_cost_us.push_back(deployed_call_cost_us(g));
  if (req.observation) report.observation = describe_observation_charge(*req.observation);
  return report;
}

// Both phases in this process, or split across the ranks of `group`; rank 0 prints the report.
int run_tune_phases(const TuneOptions& opt, TuneRequest& req, const TuneReport& report, ProcessGroup* group) {
  if (group) req.engine = tune_engine_on_ranks(*group, sweep_digest(opt.sweep_path), req.backend);
  size_t units = req.score_contexts.size() * opt.policies.size();
  for (const auto& g : opt.policies) units += parse_policy_grid(g).size() * req.tune_contexts.size();
  ProgressLine progress("tune", units, !group || group->rank() == 0);
  req.progress = &progress;
  const auto tuned = tune_and_score(req);
  progress.finish();
  if (group && group->rank() != 0) return 0;
  print_tune_report(report, tuned, opt.json);
  return 0;
}

// The command's work once the options are parsed: one shard of one phase, or the whole tune.
int run_tune_command(const TuneOptions& opt) {
  TuneRequest req;
  const TuneFilters filters = check_tune_options(opt, req);
  ProcessGroup* group = tune_process_group(opt);
  const Sweep sweep = read_sweep_csv(opt.sweep_path);
  fill_tune_request(req, opt, sweep, filters, group);
  const TuneReport report = tune_report_setup(opt, req);
  if (!opt.shard.empty()) return run_tune_shard(opt, req, report);
  return run_tune_phases(opt, req, report, group);
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<TuneOptions>();
  add_tune_options(app, *opt);
  return [opt] { return run_tune_command(*opt); };
}

const bool registered = register_command(
    {"tune", "grid search on tune contexts, score the frozen best on score contexts", setup});

}  // namespace tune_command
}  // namespace ncclbot::cli
