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
// The library call (the --shard form): cli/run_units_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.hpp"
#include "cli/run_units_call.hpp"
#include "cli/scale_cli.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "run/run_study.hpp"

namespace ncclbot::cli {
namespace run_units_command {

// The command's options: the library call's (cli/run_units_call.hpp) and the split forms'.
struct RunUnitsOptions {
  RunUnitsCallOptions call;
  std::string shard;
  double rank_timeout = 0;
  bool no_figures = false, units_only = false, shared_dir = false, json = false;
};

// Declares run-units' options on `app`, in --help order, bound to `opt`.
void add_run_units_options(CLI::App& app, RunUnitsOptions& opt) {
  app.add_option("study", opt.call.study, "study file (experiments/*.toml)")->required();
  app.add_option("--out", opt.call.out_dir, "report folder; checkpoints go to its units/")->required();
  app.add_option("--shard", opt.shard, "compute only shard I of N (0-based) of the units, then stop");
  app.add_option("--backend", opt.call.backend, "replay backend: cpu, cuda or auto (default: the study's)");
  app.add_option("--threads", opt.call.threads,
                 "CPU threads per process (default: the node's cores / ranks on it)")
      ->check(CLI::Range(0, 4096));
  app.add_flag("--units-only", opt.units_only, "under mpirun: stop after the checkpoints, no report");
  app.add_flag("--shared-dir", opt.shared_dir,
               "under mpirun: every rank writes its own checkpoints into DIR (resumable)");
  app.add_flag("--no-figures", opt.no_figures, "under mpirun: skip drawing figures in the report");
  app.add_flag("--replace", opt.call.replace, "replace the results of another study in DIR");
  add_rank_timeout_option(app, opt.rank_timeout);
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
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
  run.out_dir = opt.call.out_dir;
  run.backend = opt.call.backend;
  run.threads = threads;
  run.figures = !opt.no_figures;
  run.replace = opt.call.replace;
  return run;
}

// Prints the summary: the document with --json, else one line.
void print_summary(const nlohmann::json& out, bool json) {
  if (json)
    command_out() << out.dump(2) << "\n";
  else
    command_out() << "run-units: " << out.dump() << "\n";
}

// The command's work once the options are parsed: the library call for --shard, or the units split
// over MPI ranks, rank 0 writing the report.
int run_units(const RunUnitsOptions& opt) {
  if (!opt.shard.empty()) parse_shard(opt.shard);
  check_run_units_call(opt.call);
  ProcessGroup* group = run_units_process_group(opt);
  if (!group) {
    print_summary(run_units_document(run_units_call(opt.call, opt.shard)), opt.json);
    return 0;
  }
  const ShardSpec mine{group->rank(), group->size()};
  // Ranks sharing DIR write their own checkpoints; otherwise rank 0 writes every rank's.
  const ComputedUnits c = compute_study_units(opt.call, mine, group, opt.shared_dir);
  const std::optional<nlohmann::json> summary =
      study::finish_units_on_ranks(*group, c.done, c.units_dir, c.prepared, opt.call.study,
                                   report_options(opt, c.engine.threads), opt.units_only);
  if (summary) print_summary(*summary, opt.json);  // rank 0 only
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
