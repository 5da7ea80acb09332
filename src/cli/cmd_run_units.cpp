// `ncclbot run-units STUDY --out DIR`: the work units of a study (one per scenario and policy)
// spread over processes, for clusters. It computes units and writes their checkpoints under
// DIR/units/ exactly as `ncclbot run` does; `ncclbot run STUDY --out DIR` then finds every unit
// complete and writes the report from those bytes (docs/scale-out.md):
//   - `--shard I/N`: this process computes shard I of N and stops (Slurm job arrays, shell loops;
//     DIR on a shared file system, then one `ncclbot run` for the report);
//   - under mpirun (ncclbot-mpi): every rank computes its shard, rank 0 receives the checkpoint
//     bytes, writes them and then writes the report as `ncclbot run` would, while every rank
//     computes its share of the report's bootstrap resamples (scale/bootstrap_on_ranks.hpp).
//     Other ranks never touch DIR. With --shared-dir (DIR on a file system every rank sees) each rank writes
//     its checkpoints itself as it finishes them and skips complete ones, so a job that dies midway resumes
//     from every unit finished anywhere.
// Units are dealt to shards by cost (largest first, to the least loaded shard); a unit's result
// depends on nothing but the study, so the assignment changes only who computes what.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli/command.hpp"
#include "cli/scale_cli.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/io/atomic_file.hpp"
#include "ncclbot/scale/bootstrap_on_ranks.hpp"
#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/shard.hpp"
#include "run/run_study.hpp"
#include "study/policy_replay.hpp"
#include "study/prepared_study.hpp"
#include "study/run_folder.hpp"
#include "study/study_spec.hpp"
#include "study/study_statistics.hpp"
#include "study/unit_result.hpp"
#include "study/unit_work.hpp"

namespace ncclbot::cli {
namespace run_units_command {

namespace fs = std::filesystem;

struct RunUnitsOptions {
  std::string study, out_dir, shard, backend;
  int threads = 0;
  double rank_timeout = 0;
  bool no_figures = false, units_only = false, shared_dir = false, json = false;
};

// Unit indices of shard `s`: longest-processing-time-first over the units' replay costs.
std::vector<size_t> units_of_shard(const std::vector<study::WorkUnit>& units, ShardSpec s) {
  std::vector<size_t> order(units.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return units[a].cost > units[b].cost; });
  std::vector<double> load(size_t(s.count), 0.0);
  std::vector<size_t> mine;
  for (size_t i : order) {
    const size_t to = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    load[to] += units[i].cost;
    if (int(to) == s.index) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

// The same bytes `ncclbot run` writes for a unit (run/run_study.cpp).
std::string checkpoint_bytes(const study::UnitResult& u) {
  return study::to_json(u).dump(1) + "\n";
}

bool already_done(const fs::path& file, const study::WorkUnit& unit) {
  const auto text = read_file_if_exists(file.string());
  if (!text) return false;
  try {
    return study::unit_from_json(nlohmann::json::parse(*text)).inputs_sha256 == unit.inputs_sha256;
  } catch (const std::exception&) {
    return false;  // torn or foreign: recompute
  }
}

// Rank 0: writes the checkpoints every rank sent; returns the run's summary so far.
nlohmann::json write_gathered_units(const std::vector<std::string>& gathered, const fs::path& units_dir,
                                    const ProcessGroup& group, size_t units) {
  std::error_code ec;
  fs::create_directories(units_dir, ec);
  if (ec) throw UsageError("cannot create " + units_dir.string() + ": " + ec.message());
  int total_computed = 0;
  for (const std::string& rank_bytes : gathered) {
    const nlohmann::json from = nlohmann::json::parse(rank_bytes);
    total_computed += from.at("computed").get<int>();
    for (const auto& item : from.at("units"))
      write_file_atomic((units_dir / item.at("file").get<std::string>()).string(),
                        item.at("bytes").get<std::string>());
  }
  return {{"ranks", group.size()}, {"units", units}, {"computed", total_computed}};
}

// Declares run-units' options on `app`, in --help order, bound to `opt`.
void add_run_units_options(CLI::App& app, RunUnitsOptions& opt) {
  app.add_option("study", opt.study, "study file (experiments/*.toml)")->required();
  app.add_option("--out", opt.out_dir, "report folder; checkpoints go to its units/")->required();
  app.add_option("--shard", opt.shard, "compute only shard I of N (0-based) of the units, then stop");
  app.add_option("--backend", opt.backend, "replay backend: cpu, cuda or auto (default: the study's)");
  app.add_option("--threads", opt.threads,
                 "CPU threads per process (default: the node's cores / ranks on it)");
  app.add_flag("--units-only", opt.units_only, "under mpirun: stop after the checkpoints, no report");
  app.add_flag("--shared-dir", opt.shared_dir,
               "under mpirun: every rank writes its own checkpoints into DIR (resumable)");
  app.add_flag("--no-figures", opt.no_figures, "under mpirun: skip drawing figures in the report");
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

// Claims --out as `ncclbot run` does (study/run_folder.hpp): checkpoints are listed in the marker
// before they are written, so `run` may later replace or remove them; creates units/ when this
// process writes checkpoints itself.
void prepare_units_folder(const RunUnitsOptions& opt, const study::PreparedStudy& prepared,
                          const fs::path& units_dir, bool self_write, bool root) {
  if (self_write || root) {
    const study::RunFolder folder = study::RunFolder::claim(opt.out_dir, "--out");
    std::set<std::string> files;
    for (const auto& u : prepared.units) files.insert("units/" + u.file_name);
    folder.record(files);
  }
  if (self_write) {
    std::error_code ec;
    fs::create_directories(units_dir, ec);
    if (ec) throw UsageError("cannot create " + units_dir.string() + ": " + ec.message());
  }
}

// What this process did with its shard's units; rank 0 also holds every rank's checkpoints.
struct ShardUnitsDone {
  int computed = 0, reused = 0;
  std::vector<std::string> gathered;  // under mpirun, on rank 0: each rank's units and bytes
};

// Computes shard `mine`'s units; separate processes (and ranks sharing DIR) write their
// checkpoints themselves and skip complete ones, other ranks send theirs to rank 0.
ShardUnitsDone compute_shard_units(const study::PreparedStudy& prepared, const study::EngineOptions& engine,
                                   ShardSpec mine, const fs::path& units_dir, bool self_write,
                                   ProcessGroup* group) {
  ShardUnitsDone done;
  nlohmann::json outbox = nlohmann::json::array();
  try {
    std::vector<const study::WorkUnit*> todo;
    for (size_t i : units_of_shard(prepared.units, mine)) {
      const study::WorkUnit& u = prepared.units[i];
      if (self_write && already_done(units_dir / u.file_name, u))
        ++done.reused;
      else
        todo.push_back(&u);
    }
    const auto keep = [&](size_t k, study::UnitResult&& r) {
      const study::WorkUnit& u = *todo[k];
      const std::string bytes = checkpoint_bytes(r);
      ++done.computed;
      std::cerr << "ncclbot run-units: shard " << mine.index << "/" << mine.count << ": " << u.file_name
                << "\n";
      if (!self_write)
        outbox.push_back({{"file", u.file_name}, {"bytes", bytes}});
      else
        write_file_atomic((units_dir / u.file_name).string(), bytes);
    };
    study::compute_units(prepared, todo, engine, keep);
    if (group)
      done.gathered =
          group->gather_to_root(nlohmann::json{{"computed", done.computed}, {"units", outbox}}.dump());
  } catch (const std::exception& e) {
    if (!group) throw;
    group->abort(1, "ncclbot: rank " + std::to_string(group->rank()) + ": " + e.what());
  }
  return done;
}

// Rank 0 under mpirun: writes every rank's checkpoints and, unless --units-only, the report, with
// every rank computing its share of the bootstrap resamples; `out` becomes the run's summary. The
// other ranks wait in serve() until finish(): any failure here ends the job.
void write_units_and_report(const RunUnitsOptions& opt, const ShardUnitsDone& done, const fs::path& units_dir,
                            ProcessGroup& group, const study::PreparedStudy& prepared, int threads,
                            BootstrapOnRanks& bootstrap, nlohmann::json& out) {
  try {
    out = write_gathered_units(done.gathered, units_dir, group, prepared.units.size());
    if (!opt.units_only) {
      study::RunOptions run;
      run.out_dir = opt.out_dir;
      run.backend = opt.backend;
      run.threads = threads;
      run.figures = !opt.no_figures;
      study::set_interval_bootstrap([&bootstrap](std::span<const double> x, const BootstrapOptions& o) {
        return bootstrap.interval(x, o);
      });
      const study::RunSummary s = study::run_study(opt.study, run);
      study::set_interval_bootstrap({});
      bootstrap.finish();
      out["bootstrap_intervals_split"] = bootstrap.split_intervals();
      out["report_md"] = s.report_md;
      out["report_html"] = s.report_html;
      out["results"] = s.results_json;
      out["units_reused"] = s.units_reused;
    }
  } catch (const std::exception& e) {
    group.abort(1, std::string("ncclbot: rank 0: ") + e.what());
  }
}

// Every rank but 0 under mpirun: computes its share of the report's bootstrap resamples.
int serve_report_bootstrap(const RunUnitsOptions& opt, ProcessGroup& group, BootstrapOnRanks& bootstrap) {
  if (opt.units_only) return 0;
  try {
    bootstrap.serve();
  } catch (const std::exception& e) {
    group.abort(1, "ncclbot: rank " + std::to_string(group.rank()) + ": " + e.what());
  }
  return 0;
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

  if (root) std::cerr << "ncclbot run-units: preparing " << opt.study << "\n";
  const study::PreparedStudy prepared = study::prepare_study(std::move(spec));
  study::EngineOptions engine;
  engine.backend = study::resolve_backend(prepared.spec.backend);
  engine.threads =
      opt.threads > 0 ? opt.threads : std::max(1, default_thread_count() / (group ? group->local_size() : 1));
  const fs::path units_dir = fs::path(opt.out_dir) / "units";
  prepare_units_folder(opt, prepared, units_dir, self_write, root);
  const ShardUnitsDone done = compute_shard_units(prepared, engine, mine, units_dir, self_write, group);

  nlohmann::json out = {{"shard", {{"index", mine.index}, {"count", mine.count}}},
                        {"units", prepared.units.size()},
                        {"computed", done.computed},
                        {"reused", done.reused}};
  // The report's bootstrap intervals: rank 0 builds the report and every rank computes its share
  // of each interval's resamples.
  std::optional<BootstrapOnRanks> bootstrap;
  if (group) bootstrap.emplace(*group, unsigned(engine.threads));
  if (group && !root) return serve_report_bootstrap(opt, *group, *bootstrap);
  if (group) write_units_and_report(opt, done, units_dir, *group, prepared, engine.threads, *bootstrap, out);
  if (opt.json)
    std::cout << out.dump(2) << "\n";
  else
    std::cout << "run-units: " << out.dump() << "\n";
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
