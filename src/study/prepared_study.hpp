#pragma once
// A study made concrete: its sweeps produced and hashed, each scenario's tune and score contexts
// resolved to indices, each policy's grid expanded, and the work units listed. Everything here is
// a pure function of the study file (and any sweep files it names), so a rerun prepares the same.
#include <memory>
#include <string>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "study/study_spec.hpp"

namespace ncclbot::study {

struct PreparedSweep {
  const SweepSource* source = nullptr;
  std::shared_ptr<const Sweep> sweep;
  std::string csv;   // canonical CSV bytes (what DIR/sweeps/NAME.csv holds)
  std::string side;  // its side file's bytes (DIR/sweeps/NAME.sweep.toml), empty without side data
  std::string sha256;
};

struct PreparedScenario {
  const Scenario* spec = nullptr;
  std::shared_ptr<const Sweep> sweep;  // the tune sweep, or the union of tune and score sweeps
  std::vector<int> tune, score;        // context indices into `sweep`, in sweep order
  std::string sweeps_sha256;           // digest of the sweeps it uses
};

struct PreparedPolicy {
  const PolicyEntry* spec = nullptr;
  std::vector<std::string> grid;  // concrete configs
};

struct WorkUnit {
  int scenario = 0, policy = 0;  // indices into PreparedStudy
  std::string file_name;         // under DIR/units/
  std::string inputs_sha256;
  double cost = 0;  // replay steps, for the progress bar's ETA
};

struct PreparedStudy {
  StudySpec spec;
  std::string study_sha256;
  std::vector<PreparedSweep> sweeps;
  std::vector<PreparedScenario> scenarios;
  std::vector<PreparedPolicy> policies;
  std::vector<WorkUnit> units;  // scenario-major
};

// Errors (an empty context set, a bad policy spec, a sweep that cannot be produced) name the study
// file and the line of the offending table.
PreparedStudy prepare_study(StudySpec spec);

// The index of the policy of that report name (the loader checked every name a hypothesis or claim
// uses); -1 if there is none.
int policy_index(const PreparedStudy& study, const std::string& name);

// A seed for a named piece of resampling work, derived from the study's master seed; below 2^53
// so that JSON readers in any language hold it exactly.
uint64_t derived_seed(uint64_t master, const std::string& label);

}  // namespace ncclbot::study
