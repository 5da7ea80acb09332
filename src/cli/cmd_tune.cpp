// `ncclbot tune`: grid search on the tune contexts, freeze the best point of every policy, score
// it on the score contexts. Under mpirun (ncclbot-mpi) both replay phases are split across the
// ranks and rank 0 prints the same output as one process; without MPI, `--phase tune|score
// --shard I/N` runs one slice of one phase and `ncclbot merge` combines them (scale/tune_shards.hpp,
// docs/scale-out.md).
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/as_deployed.hpp"
#include "cli/command.hpp"
#include "cli/replay_common.hpp"
#include "cli/scale_cli.hpp"
#include "cli/tune_call.hpp"
#include "cli/tune_report.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/tune_shards.hpp"
#include "ncclbot/tune/tune.hpp"

namespace ncclbot::cli {
namespace tune_command {

// The command's options: the library call's (cli/tune_call.hpp) and the split forms'.
struct TuneOptions {
  TuneCallOptions call;
  std::string phase, shard, choice_path, out_path;
  double rank_timeout = 0;
  bool json = false;
};

// One slice of one phase of a tune split over separate processes, written as a partial.
int run_tune_shard(const TuneOptions& opt, const TuneRequest& req, const TuneReport& report) {
  const ShardSpec shard = parse_shard(opt.shard);
  const std::string digest = sweep_digest(opt.call.sweep_path);
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
  TuneCallOptions& call = opt.call;
  app.add_option("--sweep", call.sweep_path, "sweep CSV")->required();
  app.add_option("--policy", call.policies, "policy grid, e.g. ucb1:c=0.05|0.1|0.2,n0=0|4|16 (repeatable)")
      ->required();
  app.add_option("--tune-nodes", call.tune_nodes, "node counts of the tune contexts (default 4,8)");
  app.add_option("--score-nodes", call.score_nodes, "node counts of the score contexts (default 16,32)");
  app.add_option("--collectives", call.collectives, "only these collectives");
  app.add_option("--objective", call.objective, "mean, p99 or above_10pct of the online loss (default mean)");
  app.add_option("--seeds", call.seeds, "replays per context and config")->required();
  app.add_option("--seed", call.seed, "first seed (default 0)");
  app.add_option("--horizon", call.horizon, "steps per replay (T)")->required();
  call.feedback.add_to(app);
  app.add_option("--threads", call.threads, "worker threads (0 or left out: all cores)");
  app.add_option("--backend", call.backend, "cpu, cuda or auto (default cpu)");
  app.add_option("--phase", opt.phase, "with --shard: tune (grid points on the tune contexts) or score");
  app.add_option("--shard", opt.shard, "with --phase: run only slice I of N (0-based) and write a partial");
  app.add_option("--choice", opt.choice_path, "with --phase score: the choice `ncclbot merge` wrote");
  app.add_option("--out", opt.out_path, "with --shard: the partial result file for `ncclbot merge`");
  add_rank_timeout_option(app, opt.rank_timeout);
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
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

// The command's work once the options are parsed: the library call, one shard of one phase, or the
// whole tune split across MPI ranks (rank 0 prints the report).
int run_tune_command(const TuneOptions& opt) {
  check_shard_options(opt);
  ProcessGroup* group = tune_process_group(opt);
  if (opt.shard.empty() && !group) {
    const TuneCallResult r = tune_call(opt.call);
    print_tune_report(r.report, r.tuned, opt.json);
    return 0;
  }
  TuneRequest req;
  const TuneFilters filters = check_tune_call(opt.call, req);
  if (!opt.out_path.empty())
    check_output_not_input(opt.out_path, {opt.call.sweep_path, opt.choice_path}, "--out");
  const Sweep sweep = read_sweep_csv(opt.call.sweep_path);
  // Ranks on one node share its cores unless told otherwise.
  fill_tune_request(req, opt.call, sweep, filters, group ? group->local_size() : 1);
  const TuneReport report = tune_report_setup(opt.call, req);
  if (!opt.shard.empty()) return run_tune_shard(opt, req, report);
  req.engine = tune_engine_on_ranks(*group, sweep_digest(opt.call.sweep_path), req.backend);
  const auto tuned = run_tune_phases(req, group->rank() == 0);
  if (group->rank() == 0) print_tune_report(report, tuned, opt.json);
  return 0;
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
