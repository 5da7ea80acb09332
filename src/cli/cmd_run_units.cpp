// `ncclbot run-units STUDY --out DIR`: the work units of a study (one per scenario and policy)
// spread over processes, for clusters (run/run_units.hpp). It computes units and writes their
// checkpoints under DIR/units/ exactly as `ncclbot run` does; `ncclbot run STUDY --out DIR` then
// finds every unit complete and writes the report from those bytes (docs/scale-out.md):
//   - `--shard I/N`: this process computes shard I of N and stops (Slurm job arrays, shell loops;
//     DIR on a shared file system, then one `ncclbot run` for the report);
//   - under mpirun (ncclbot-mpi): every rank computes its shard, rank 0 receives the checkpoint
//     bytes, writes them and then writes the report as `ncclbot run` would, while every rank
//     computes its share of the report's bootstrap resamples (scale/bootstrap_on_ranks.hpp).
//     Other ranks never touch DIR. With --shared-dir (DIR on a file system every rank sees) each
//     rank writes its checkpoints itself as it finishes them and skips complete ones, so a job that
//     dies midway resumes from every unit finished anywhere.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.hpp"
#include "cli/scale_cli.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/shard.hpp"
#include "run/run_study.hpp"
#include "run/run_units.hpp"
#include "study/policy_replay.hpp"
#include "study/prepared_study.hpp"
#include "study/study_spec.hpp"
#include "study/unit_work.hpp"

namespace ncclbot::cli {
namespace run_units_command {

namespace fs = std::filesystem;

struct RunUnitsOptions {
  std::string study, out_dir, shard, backend;
  int threads = 0;
  double rank_timeout = 0;
  bool no_figures = false, units_only = false, shared_dir = false, replace = false, json = false;
};

// Declares run-units' options on `app`, in --help order, bound to `opt`.
void add_run_units_options(CLI::App& app, RunUnitsOptions& opt) {
  app.add_option("study", opt.study, "study file (experiments/*.toml)")->required();
  app.add_option("--out", opt.out_dir, "report folder; checkpoints go to its units/")->required();
  app.add_option("--shard", opt.shard, "compute only shard I of N (0-based) of the units, then stop");
  app.add_option("--backend", opt.backend, "replay backend: cpu, cuda or auto (default: the study's)");
  app.add_option("--threads", opt.threads,
                 "CPU threads per process (default: the node's cores / ranks on it)")
      ->check(CLI::Range(0, 4096));
  app.add_flag("--units-only", opt.units_only, "under mpirun: stop after the checkpoints, no report");
  app.add_flag("--shared-dir", opt.shared_dir,
               "under mpirun: every rank writes its own checkpoints into DIR (resumable)");
  app.add_flag("--no-figures", opt.no_figures, "under mpirun: skip drawing figures in the report");
  app.add_flag("--replace", opt.replace, "replace the results of another study in DIR");
  add_rank_timeout_option(app, opt.rank_timeout);
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
}

// Checks the options that need no study; the --shard given (the default one without it).
ShardSpec check_run_units_options(const RunUnitsOptions& opt) {
  const ShardSpec shard = !opt.shard.empty() ? parse_shard(opt.shard) : ShardSpec{};
  if (opt.threads < 0) throw UsageError("--threads must be positive");
  if (!opt.backend.empty() && opt.backend != "cpu" && opt.backend != "cuda" && opt.backend != "auto")
    throw UsageError("--backend must be cpu, cuda or auto");
  return shard;
}

// The MPI ranks the units are split over (null for separate processes), with --rank-timeout
// applied; a usage error unless exactly one of --shard and mpirun splits them.
ProcessGroup* run_units_process_group(const RunUnitsOptions& opt) {
  const bool sharded = !opt.shard.empty();
  ProcessGroup* group = process_group();
  if (group && group->size() == 1) group = nullptr;
  if (group && sharded)
    throw UsageError("--shard is for separate processes; under mpirun the ranks split the work");
  if (!group && !sharded) throw UsageError("run-units needs --shard I/N or mpirun with 2 or more ranks");
  apply_rank_timeout(group, opt.rank_timeout);
  return group;
}

// What run_study() is asked for when rank 0 writes the report under mpirun.
study::RunOptions report_options(const RunUnitsOptions& opt, int threads) {
  study::RunOptions run;
  run.out_dir = opt.out_dir;
  run.backend = opt.backend;
  run.threads = threads;
  run.figures = !opt.no_figures;
  run.replace = opt.replace;
  return run;
}

// The command's work once the options are parsed.
int run_units(const RunUnitsOptions& opt) {
  const ShardSpec shard = check_run_units_options(opt);
  study::StudySpec spec = study::load_study(opt.study);
  if (!opt.backend.empty()) spec.backend = opt.backend;
  ProcessGroup* group = run_units_process_group(opt);
  const ShardSpec mine = group ? ShardSpec{group->rank(), group->size()} : shard;
  const bool root = !group || group->rank() == 0;
  // Processes that write their own checkpoints: separate shards, and ranks sharing DIR.
  const bool self_write = !group || opt.shared_dir;

  if (root) command_err() << "ncclbot run-units: preparing " << opt.study << "\n";
  const study::PreparedStudy prepared = study::prepare_study(std::move(spec));
  study::EngineOptions engine;
  engine.backend = study::resolve_backend(prepared.spec.backend);
  engine.threads =
      opt.threads > 0 ? opt.threads : std::max(1, default_thread_count() / (group ? group->local_size() : 1));
  const fs::path units_dir = fs::path(opt.out_dir) / "units";
  study::prepare_units_folder(opt.out_dir, prepared, opt.replace, self_write, root);
  const study::ShardUnitsDone done =
      study::compute_shard_units(prepared, engine, mine, units_dir, self_write, group);

  nlohmann::json out = {{"shard", {{"index", mine.index}, {"count", mine.count}}},
                        {"units", prepared.units.size()},
                        {"computed", done.computed},
                        {"reused", done.reused}};
  if (group) {
    const std::optional<nlohmann::json> summary = study::finish_units_on_ranks(
        *group, done, units_dir, prepared, opt.study, report_options(opt, engine.threads), opt.units_only);
    if (!summary) return 0;  // every rank but 0
    out = *summary;
  }
  if (opt.json)
    command_out() << out.dump(2) << "\n";
  else
    command_out() << "run-units: " << out.dump() << "\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<RunUnitsOptions>();
  add_run_units_options(app, *opt);
  return [opt] { return run_units(*opt); };
}

const bool registered = register_command(
    {"run-units", "compute a shard of a study's units (or split them over MPI ranks) for `ncclbot run`",
     setup});

}  // namespace run_units_command
}  // namespace ncclbot::cli
