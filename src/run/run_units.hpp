#pragma once
// `ncclbot run-units`: the work units of a study (one per scenario and policy) spread over
// processes, for clusters. Units are computed and their checkpoints written under DIR/units/ in
// exactly the bytes `ncclbot run` writes (run/run_study.hpp), so that `ncclbot run STUDY --out
// DIR` then finds every unit complete and writes the report from those bytes (docs/scale-out.md).
// Separate processes (and MPI ranks sharing DIR) write their own checkpoints and skip complete
// ones; other MPI ranks send theirs to rank 0, which writes them and then the report while every
// rank computes its share of the report's bootstrap resamples (scale/bootstrap_on_ranks.hpp).
// Units are dealt to shards by cost (largest first, to the least loaded shard); a unit's result
// depends on nothing but the study, so the assignment changes only who computes what.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/shard.hpp"
#include "run/run_study.hpp"
#include "study/prepared_study.hpp"
#include "study/unit_work.hpp"

namespace ncclbot::study {

// Unit indices of shard `s`, ascending: longest-processing-time-first over the units' replay costs.
std::vector<size_t> units_of_shard(const std::vector<WorkUnit>& units, ShardSpec s);

// Claims `out_dir` for the study as `ncclbot run` does (study/run_folder.hpp; `out_dir` is named
// --out in its errors; `replace` takes over another study's folder): checkpoints are listed in the
// marker before they are written, so `run` may later replace or remove them; creates DIR/units when
// this process writes checkpoints itself (`self_write`). Only processes that write (`self_write`,
// or the `root`) claim the folder.
void prepare_units_folder(const std::string& out_dir, const PreparedStudy& prepared, bool replace,
                          bool self_write, bool root);

// What this process did with its shard's units; rank 0 also holds every rank's checkpoints.
struct ShardUnitsDone {
  int computed = 0, reused = 0;
  std::vector<std::string> gathered;  // with a group, on rank 0: each rank's units and bytes
};

// Computes shard `mine`'s units, each one's name on stderr as it finishes; with `self_write` it
// writes their checkpoints into `units_dir` itself and skips complete ones, else (a `group` is
// then required) it sends them to rank 0. With a group every rank's checkpoints are gathered on
// rank 0, and a failure on any rank aborts the job naming the rank.
ShardUnitsDone compute_shard_units(const PreparedStudy& prepared, const EngineOptions& engine, ShardSpec mine,
                                   const std::filesystem::path& units_dir, bool self_write,
                                   ProcessGroup* group);

// Under mpirun, once compute_shard_units() returned on every rank: rank 0 writes every rank's
// checkpoints into `units_dir` and, unless `units_only`, the report of `study_path` as
// run_study(study_path, report) writes it, every rank computing its share of the report's
// bootstrap resamples with report.threads threads; it returns the run's summary ({"ranks",
// "units", "computed"}, and with the report "bootstrap_intervals_split", "report_md",
// "report_html", "results", "units_reused"). The other ranks serve their share and return nullopt.
// A failure on any rank ends the job.
std::optional<nlohmann::json> finish_units_on_ranks(ProcessGroup& group, const ShardUnitsDone& done,
                                                    const std::filesystem::path& units_dir,
                                                    const PreparedStudy& prepared,
                                                    const std::string& study_path, const RunOptions& report,
                                                    bool units_only);

}  // namespace ncclbot::study
