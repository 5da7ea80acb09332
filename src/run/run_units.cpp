#include "run/run_units.hpp"

#include <algorithm>
#include <iostream>
#include <set>

#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/atomic_file.hpp"
#include "ncclbot/scale/bootstrap_on_ranks.hpp"
#include "study/checkpoint.hpp"
#include "study/run_folder.hpp"
#include "study/study_statistics.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::study {
namespace {

namespace fs = std::filesystem;

void create_units_folder(const fs::path& units_dir) {
  std::error_code ec;
  fs::create_directories(units_dir, ec);
  if (ec) throw UsageError("cannot create " + units_dir.string() + ": " + ec.message());
}

bool already_done(const fs::path& units_dir, const PreparedStudy& prepared, const WorkUnit& unit) {
  std::string why;
  const bool done =
      reusable_checkpoint((units_dir / unit.file_name).string(), prepared, unit, why).has_value();
  if (!why.empty())
    command_err() << "ncclbot run-units: recomputing " << (units_dir / unit.file_name).string() << ": " << why
                  << "\n";
  return done;
}

// Rank 0: writes the checkpoints every rank sent; returns the run's summary so far.
nlohmann::json write_gathered_units(const std::vector<std::string>& gathered, const fs::path& units_dir,
                                    const ProcessGroup& group, size_t units) {
  create_units_folder(units_dir);
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

// Rank 0 under mpirun: writes every rank's checkpoints and, unless `units_only`, the report, with
// every rank computing its share of the bootstrap resamples; returns the run's summary. The other
// ranks wait in serve() until finish(): any failure here ends the job.
nlohmann::json write_units_and_report(const ShardUnitsDone& done, const fs::path& units_dir,
                                      ProcessGroup& group, const PreparedStudy& prepared,
                                      BootstrapOnRanks& bootstrap, const std::string& study_path,
                                      const RunOptions& report, bool units_only) {
  nlohmann::json out;
  try {
    out = write_gathered_units(done.gathered, units_dir, group, prepared.units.size());
    if (!units_only) {
      set_interval_bootstrap([&bootstrap](std::span<const double> x, const BootstrapOptions& o) {
        return bootstrap.interval(x, o);
      });
      const RunSummary s = run_study(study_path, report);
      set_interval_bootstrap({});
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
  return out;
}

// Every rank but 0 under mpirun: computes its share of the report's bootstrap resamples.
void serve_report_bootstrap(ProcessGroup& group, BootstrapOnRanks& bootstrap) {
  try {
    bootstrap.serve();
  } catch (const std::exception& e) {
    group.abort(1, "ncclbot: rank " + std::to_string(group.rank()) + ": " + e.what());
  }
}

}  // namespace

std::vector<size_t> units_of_shard(const std::vector<WorkUnit>& units, ShardSpec s) {
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

void prepare_units_folder(const std::string& out_dir, const PreparedStudy& prepared, bool replace,
                          bool self_write, bool root) {
  if (!self_write && !root) return;
  const RunFolder folder = RunFolder::claim(out_dir, "--out", {"run", prepared.spec.name}, replace);
  std::set<std::string> files;
  for (const auto& u : prepared.units) files.insert("units/" + u.file_name);
  folder.record(files);
  if (self_write) folder.make_subfolder("units");
}

ShardUnitsDone compute_shard_units(const PreparedStudy& prepared, const EngineOptions& engine, ShardSpec mine,
                                   const std::filesystem::path& units_dir, bool self_write,
                                   ProcessGroup* group) {
  ShardUnitsDone done;
  nlohmann::json outbox = nlohmann::json::array();
  try {
    std::vector<const WorkUnit*> todo;
    for (size_t i : units_of_shard(prepared.units, mine)) {
      const WorkUnit& u = prepared.units[i];
      if (self_write && already_done(units_dir, prepared, u))
        ++done.reused;
      else
        todo.push_back(&u);
    }
    const auto keep = [&](size_t k, UnitResult&& r) {
      const WorkUnit& u = *todo[k];
      const std::string bytes = checkpoint_text(r);
      ++done.computed;
      command_err() << "ncclbot run-units: shard " << mine.index << "/" << mine.count << ": " << u.file_name
                    << "\n";
      if (!self_write)
        outbox.push_back({{"file", u.file_name}, {"bytes", bytes}});
      else
        write_file_atomic((units_dir / u.file_name).string(), bytes);
    };
    compute_units(prepared, todo, engine, keep);
    if (group)
      done.gathered =
          group->gather_to_root(nlohmann::json{{"computed", done.computed}, {"units", outbox}}.dump());
  } catch (const std::exception& e) {
    if (!group) throw;
    group->abort(1, "ncclbot: rank " + std::to_string(group->rank()) + ": " + e.what());
  }
  return done;
}

std::optional<nlohmann::json> finish_units_on_ranks(ProcessGroup& group, const ShardUnitsDone& done,
                                                    const std::filesystem::path& units_dir,
                                                    const PreparedStudy& prepared,
                                                    const std::string& study_path, const RunOptions& report,
                                                    bool units_only) {
  // The report's bootstrap intervals: rank 0 builds the report and every rank computes its share
  // of each interval's resamples.
  BootstrapOnRanks bootstrap(group, unsigned(report.threads));
  if (group.rank() != 0) {
    if (!units_only) serve_report_bootstrap(group, bootstrap);
    return std::nullopt;
  }
  return write_units_and_report(done, units_dir, group, prepared, bootstrap, study_path, report, units_only);
}

}  // namespace ncclbot::study
