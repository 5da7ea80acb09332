#pragma once
// `run-units` as a library call (cli/replay_call.hpp has the pattern): one shard of a study's work
// units (one per scenario and policy) computed in this process, their checkpoints written under
// DIR/units/ exactly as `ncclbot run` writes them (run/run_units.hpp, docs/scale-out.md); typed
// options in, what was computed out. The MPI form (ranks split the units, rank 0 writes the report)
// stays the command's; both share compute_study_units().
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/shard.hpp"
#include "run/run_units.hpp"
#include "study/prepared_study.hpp"
#include "study/unit_work.hpp"

namespace ncclbot::cli {

struct RunUnitsCallOptions {
  std::string study;     // the study file
  std::string out_dir;   // the report folder; checkpoints go to its units/
  std::string backend;   // cpu, cuda or auto; empty: the study's
  int threads = 0;       // CPU threads per process; 0: the node's cores / processes on it
  bool replace = false;  // take over the results of another study in out_dir
};

struct RunUnitsCallResult {
  ShardSpec shard;
  size_t units = 0;  // of the whole study
  int computed = 0, reused = 0;
};

// Computes shard `shard` ("I/N") of the study's units. UsageError on a bad option, InputError on
// a bad study or a folder that holds another study's results (without `replace`).
RunUnitsCallResult run_units_call(const RunUnitsCallOptions& options, const std::string& shard);

// The JSON document `run-units --shard I/N --json` prints.
nlohmann::json run_units_document(const RunUnitsCallResult& result);

// The checks of the options that need no study (threads, backend).
void check_run_units_call(const RunUnitsCallOptions& options);

// The study prepared and shard `mine` of its units computed (written by this process when
// `self_write`, else gathered to rank 0 of `group`); the pieces the MPI form finishes with.
struct ComputedUnits {
  study::PreparedStudy prepared;
  study::EngineOptions engine;
  std::filesystem::path units_dir;
  study::ShardUnitsDone done;
};
ComputedUnits compute_study_units(const RunUnitsCallOptions& options, ShardSpec mine, ProcessGroup* group,
                                  bool self_write);

}  // namespace ncclbot::cli
