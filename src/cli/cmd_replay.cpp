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
#include "cli/replay_call.hpp"
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

// The command's options: the library call's (cli/replay_call.hpp) and the split forms'.
struct ReplayOptions {
  ReplayCallOptions call;
  std::string shard, out_path;
  double rank_timeout = 0;
  bool json = false;
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
  app.add_option("--sweep", opt.call.sweep_path, "sweep CSV")->required();
  app.add_option("--policy", opt.call.policies, "policy spec, e.g. ucb1:c=0.1|0.2,n0=4 (repeatable)")
      ->required();
  app.add_option("--seeds", opt.call.seeds, "replays per context and config (seeds seed .. seed+N-1)")
      ->required();
  app.add_option("--seed", opt.call.seed, "first seed (default 0)");
  app.add_option("--horizon", opt.call.horizon, "steps per replay (T)")->required();
  opt.call.feedback.add_to(app);
  app.add_option("--threads", opt.call.threads, "worker threads (0 or left out: all cores)");
  app.add_option("--backend", opt.call.backend, "cpu, cuda or auto (default cpu)");
  app.add_option("--nodes", opt.call.nodes, "only these node counts, e.g. 16,32");
  app.add_option("--collectives", opt.call.collectives, "only these collectives, e.g. allreduce,allgather");
  app.add_option("--raw", opt.call.raw_path, "write one CSV row per replay to this file");
  app.add_option("--shard", opt.shard, "run only slice I of N (0-based, e.g. 2/8) and write a partial");
  app.add_option("--out", opt.out_path, "with --shard: the partial result file for `ncclbot merge`");
  add_rank_timeout_option(app, opt.rank_timeout);
  app.add_option("--budget", opt.call.budget,
                 "also check every replay against 1 + ALPHA times NCCL's default's cumulative latency");
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
}

// The options that only the split forms take, checked before anything else.
void check_split_options(const ReplayOptions& opt) {
  const bool sharded = !opt.shard.empty();
  if (sharded) parse_shard(opt.shard);
  if (sharded && opt.out_path.empty()) throw UsageError("--shard needs --out FILE for the partial result");
  if (!sharded && !opt.out_path.empty()) throw UsageError("--out is only used with --shard");
  if (sharded && !opt.call.raw_path.empty()) throw UsageError("--raw cannot be combined with --shard");
  if (sharded && opt.call.budget) throw UsageError("--budget cannot be combined with --shard");
}

// The MPI ranks the replay is split over (null for one process), with --rank-timeout applied.
ProcessGroup* replay_process_group(const ReplayOptions& opt) {
  ProcessGroup* group = process_group();
  if (group && group->size() == 1) group = nullptr;
  if (group && !opt.shard.empty())
    throw UsageError("--shard is for separate processes; under mpirun the ranks split the work");
  if (group && !opt.call.raw_path.empty()) throw UsageError("--raw cannot be combined with MPI ranks");
  if (group && opt.call.budget) throw UsageError("--budget cannot be combined with MPI ranks");
  apply_rank_timeout(group, opt.rank_timeout);
  return group;
}

// The replay split up: over the ranks of `group` (rank 0 prints the report), or else one --shard
// of it, written as a partial for `ncclbot merge`.
int replay_split(const ReplayOptions& opt, ReplayJob& job, const ReplayPlan& plan, const ReplayReport& report,
                 ProcessGroup* group) {
  const ShardSpec shard = group ? ShardSpec{} : parse_shard(opt.shard);
  nlohmann::json identity = replay_identity(job, sweep_digest(opt.call.sweep_path), report.backend);
  if (!report.as_deployed.empty()) identity["as_deployed"] = report.as_deployed;
  if (!report.observation.empty()) identity["observation"] = report.observation;
  if (group) return replay_on_ranks(*group, job, plan.backend, identity, report, opt.json);
  const size_t total = job.configs.size() * job.contexts.size();
  ProgressLine progress("replay shard " + opt.shard, job_shard_units(job, shard).size());
  job.progress = &progress;
  const ReplaySlice slice = run_replay_units(job, shard, plan.backend);
  progress.finish();
  write_shard_partial(opt.out_path, encode_replay_partial(identity, shard, total, slice), shard, total,
                      slice.units.size(), opt.json);
  return 0;
}

// The command's work once the options are parsed: the library call, or one of its split forms.
int run_replay_command(const ReplayOptions& opt) {
  check_split_options(opt);
  ProcessGroup* group = replay_process_group(opt);
  if (opt.shard.empty() && !group) {
    const ReplayCallResult r = replay_call(opt.call);
    print_replay_report(r.report, r.results, opt.json);
    return 0;
  }
  ReplayPlan plan = check_replay_call(opt.call);
  if (!opt.out_path.empty())
    check_output_not_input(opt.out_path, {opt.call.sweep_path, opt.call.raw_path}, "--out");
  const Sweep sweep = read_sweep_csv(opt.call.sweep_path);
  // Ranks on one node share its cores unless told otherwise.
  PreparedReplayCall prepared = prepare_replay_call(opt.call, plan, sweep, group ? group->local_size() : 1);
  return replay_split(opt, prepared.job, plan, prepared.report, group);
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
