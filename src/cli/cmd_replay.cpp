// `ncclbot replay`: replay the given policy configs (grids expand to every point) on a sweep over
// seeds and report, per config, the online and final loss metrics over contexts. With --shard I/N
// it runs one slice of the work and writes a partial result for `ncclbot merge`; under mpirun
// (the ncclbot-mpi program) the ranks split the work and rank 0 prints the report
// (docs/scale-out.md). Every form prints the same numbers, bit for bit.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/progress_line.hpp"
#include "cli/as_deployed.hpp"
#include "cli/command.hpp"
#include "cli/replay_common.hpp"
#include "cli/replay_report.hpp"
#include "cli/scale_cli.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/replay/budget_check.hpp"
#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/replay_on_ranks.hpp"
#include "ncclbot/scale/replay_partial.hpp"
#include "ncclbot/supervised/supervised.hpp"

namespace ncclbot::cli {
namespace replay_command {

struct ReplayOptions {
  std::string sweep_path;
  std::vector<std::string> policies;
  int seeds = 1;
  uint64_t seed = 0;
  int horizon = 0;
  FeedbackOptions feedback;  // --delay, --window, --as-deployed
  int threads = 0;
  std::string backend = "cpu";
  std::string nodes, collectives;
  std::string raw_path;
  std::string shard, out_path;
  double rank_timeout = 0;
  bool json = false;
  std::optional<double> budget;
};

// Rank r of the group replays shard r/size; rank 0 gathers the partials (seed-averaged losses
// only), merges them in rank order and prints the report. A failure on any rank ends the job.
int replay_on_ranks(ProcessGroup& group, const ReplayJob& job, ReplayBackend backend,
                    const nlohmann::json& identity, const ReplayReport& report, bool json) {
  const std::optional<ReplayResults> results = gather_replay_on_ranks(group, job, backend, identity);
  if (results) print_replay_report(report, *results, json);
  return 0;
}

// Declares replay's options on `app`, in --help order, bound to `opt`.
void add_replay_options(CLI::App& app, ReplayOptions& opt) {
  app.add_option("--sweep", opt.sweep_path, "sweep CSV")->required();
  app.add_option("--policy", opt.policies, "policy spec, e.g. ucb1:c=0.1|0.2,n0=4 (repeatable)")->required();
  app.add_option("--seeds", opt.seeds, "replays per context and config (seeds seed .. seed+N-1)")->required();
  app.add_option("--seed", opt.seed, "first seed (default 0)");
  app.add_option("--horizon", opt.horizon, "steps per replay (T)")->required();
  opt.feedback.add_to(app);
  app.add_option("--threads", opt.threads, "worker threads (0 or left out: all cores)");
  app.add_option("--backend", opt.backend, "cpu, cuda or auto (default cpu)");
  app.add_option("--nodes", opt.nodes, "only these node counts, e.g. 16,32");
  app.add_option("--collectives", opt.collectives, "only these collectives, e.g. allreduce,allgather");
  app.add_option("--raw", opt.raw_path, "write one CSV row per replay to this file");
  app.add_option("--shard", opt.shard, "run only slice I of N (0-based, e.g. 2/8) and write a partial");
  app.add_option("--out", opt.out_path, "with --shard: the partial result file for `ncclbot merge`");
  add_rank_timeout_option(app, opt.rank_timeout);
  app.add_option("--budget", opt.budget,
                 "also check every replay against 1 + ALPHA times NCCL's default's cumulative latency");
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
}

// What the options say once parsed, before the sweep is read.
struct ReplayPlan {
  ShardSpec shard;  // with --shard
  ReplayBackend backend = ReplayBackend::kCpu;
  ContextFilter filter;
  std::vector<PolicySpec> configs;  // every point of every --policy grid
};

// Checks the options and parses them, so that usage errors come before the sweep is read.
ReplayPlan check_replay_options(const ReplayOptions& opt) {
  const bool sharded = !opt.shard.empty();
  ReplayPlan plan;
  plan.shard = sharded ? parse_shard(opt.shard) : ShardSpec{};
  if (sharded && opt.out_path.empty()) throw UsageError("--shard needs --out FILE for the partial result");
  if (!sharded && !opt.out_path.empty()) throw UsageError("--out is only used with --shard");
  if (sharded && !opt.raw_path.empty()) throw UsageError("--raw cannot be combined with --shard");
  if (sharded && opt.budget) throw UsageError("--budget cannot be combined with --shard");
  if (opt.budget && !(*opt.budget >= 0.0 && *opt.budget <= 10.0))
    throw UsageError("--budget must be a number in [0, 10]");
  plan.backend = resolve_replay_backend(parse_replay_backend(opt.backend), command_err());
  if (!opt.nodes.empty()) plan.filter.nodes = parse_node_list(opt.nodes, "--nodes");
  if (!opt.collectives.empty())
    plan.filter.collectives = parse_collective_list(opt.collectives, "--collectives");
  for (const auto& text : opt.policies)
    for (auto& p : parse_policy_grid(text)) plan.configs.push_back(std::move(p));
  if (opt.threads < 0) throw UsageError("--threads must be positive");
  check_replay_size(opt.seeds, opt.horizon);
  if (!opt.raw_path.empty()) check_output_not_input(opt.raw_path, {opt.sweep_path}, "--raw");
  if (!opt.out_path.empty()) check_output_not_input(opt.out_path, {opt.sweep_path, opt.raw_path}, "--out");
  return plan;
}

// The replay job on the selected contexts of `sweep`, without its threads and frozen decisions.
ReplayJob replay_job_from(const ReplayOptions& opt, const ReplayPlan& plan, const Sweep& sweep) {
  ReplayJob job;
  job.sweep = &sweep;
  job.contexts = plan.filter.select_some(sweep, opt.sweep_path);
  job.configs = plan.configs;
  job.seeds = opt.seeds;
  job.seed_base = opt.seed;
  job.horizon = opt.horizon;
  const DeployedFeedback feedback = opt.feedback.resolve();
  job.delay = feedback.delay;
  job.window = feedback.window;
  job.policy_start = feedback.policy_start;
  if (opt.feedback.deployment()) job.call_cost_us = deployed_call_costs(job.configs);
  if (const auto charge = opt.feedback.observation_charge())
    job.observation_cost = observation_costs(sweep, *charge);
  return job;
}

// The MPI ranks the replay is split over (null for one process), with --rank-timeout applied.
ProcessGroup* replay_process_group(const ReplayOptions& opt) {
  ProcessGroup* group = process_group();
  if (group && group->size() == 1) group = nullptr;
  if (group && !opt.shard.empty())
    throw UsageError("--shard is for separate processes; under mpirun the ranks split the work");
  if (group && !opt.raw_path.empty()) throw UsageError("--raw cannot be combined with MPI ranks");
  if (group && opt.budget) throw UsageError("--budget cannot be combined with MPI ranks");
  apply_rank_timeout(group, opt.rank_timeout);
  return group;
}

// Each config's frozen decisions: a supervised selector's, none for the others.
void add_fixed_slots(ReplayJob& job, const ReplayOptions& opt, const Sweep& sweep,
                     const std::vector<PolicySpec>& configs) {
  for (const PolicySpec& p : configs) {
    if (p.config.kind == PolicyKind::kAuto && !sweep.has_prior())
      throw InputError(opt.sweep_path, 0, "policy 'auto' needs a prior_us column");
    // No tune/score split here: supervised selectors are fit leave-one-out on the selected contexts.
    job.fixed_slots.push_back(is_supervised(p.config.kind)
                                  ? supervised_decisions(p.config, sweep, job.contexts, true)
                                  : std::vector<int>{});
  }
}

// The report's setup fields, from the options and the job.
ReplayReport replay_report_setup(const ReplayOptions& opt, const ReplayJob& job, ReplayBackend backend,
                                 const std::vector<PolicySpec>& configs) {
  ReplayReport report;
  report.backend = std::string(replay_backend_name(backend));
  for (const PolicySpec& p : configs) report.policies.push_back(p.text);
  report.contexts = job.contexts.size();
  report.seeds = job.seeds;
  report.horizon = job.horizon;
  report.delay = job.delay;
  report.window = job.window;
  report.policy_start = job.policy_start;
  report.as_deployed = opt.feedback.as_deployed;
  report.call_cost_us = job.call_cost_us;
  if (const auto charge = opt.feedback.observation_charge())
    report.observation = describe_observation_charge(*charge);
  return report;
}

// The replay split up: over the ranks of `group` (rank 0 prints the report), or else one --shard
// of it, written as a partial for `ncclbot merge`.
int replay_split(const ReplayOptions& opt, ReplayJob& job, const ReplayPlan& plan, const ReplayReport& report,
                 ProcessGroup* group) {
  nlohmann::json identity = replay_identity(job, sweep_digest(opt.sweep_path), report.backend);
  if (!report.as_deployed.empty()) identity["as_deployed"] = report.as_deployed;
  if (!report.observation.empty()) identity["observation"] = report.observation;
  if (group) return replay_on_ranks(*group, job, plan.backend, identity, report, opt.json);
  const size_t total = job.configs.size() * job.contexts.size();
  ProgressLine progress("replay shard " + opt.shard, job_shard_units(job, plan.shard).size());
  job.progress = &progress;
  const ReplaySlice slice = run_replay_units(job, plan.shard, plan.backend);
  progress.finish();
  write_shard_partial(opt.out_path, encode_replay_partial(identity, plan.shard, total, slice), plan.shard,
                      total, slice.units.size(), opt.json);
  return 0;
}

// The whole replay in this process, with --raw rows if asked, then the report.
int replay_whole(const ReplayOptions& opt, ReplayJob& job, ReplayBackend backend,
                 const ReplayReport& report) {
  // Rows go to a temporary that becomes --raw only once the replay is complete: a killed run
  // leaves no CSV that looks whole but lacks rows.
  std::optional<OutputFile> raw;
  if (!opt.raw_path.empty()) {
    raw.emplace(opt.raw_path, "--raw");
    raw->stream() << "config,policy,context,seed,online_loss,final_loss,final_slot\n";
    job.raw = &raw->stream();
  }
  ProgressLine progress("replay", job.configs.size() * job.contexts.size());
  job.progress = &progress;
  const ReplayResults results = run_replay(job, backend);
  progress.finish();
  if (raw) raw->commit();
  if (!opt.budget) {
    print_replay_report(report, results, opt.json);
    return 0;
  }
  ReplayReport checked = report;
  checked.budget_alpha = opt.budget;
  checked.budget = check_budget(job, *opt.budget);
  print_replay_report(checked, results, opt.json);
  return 0;
}

// The command's work once the options are parsed.
int run_replay_command(const ReplayOptions& opt) {
  ReplayPlan plan = check_replay_options(opt);
  const Sweep sweep = read_sweep_csv(opt.sweep_path);
  plan.backend =
      backend_for_specs(parse_replay_backend(opt.backend), plan.backend, plan.configs, command_err());
  ReplayJob job = replay_job_from(opt, plan, sweep);
  ProcessGroup* group = replay_process_group(opt);
  // Ranks on one node share its cores unless told otherwise.
  job.threads =
      opt.threads > 0 ? opt.threads : std::max(1, default_thread_count() / (group ? group->local_size() : 1));
  add_fixed_slots(job, opt, sweep, plan.configs);
  const ReplayReport report = replay_report_setup(opt, job, plan.backend, plan.configs);
  if (!opt.shard.empty() || group) return replay_split(opt, job, plan, report, group);
  return replay_whole(opt, job, plan.backend, report);
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<ReplayOptions>();
  add_replay_options(app, *opt);
  return [opt] { return run_replay_command(*opt); };
}

const bool registered =
    register_command({"replay", "replay policies on a sweep; online and final loss per config", setup});

}  // namespace replay_command
}  // namespace ncclbot::cli
