#pragma once
// A HiPIPE study: fabrics x node counts x message sizes from a TOML file (experiments/hipipe.toml),
// every scheduler on every case, aggregated into the numbers the paper reports (mean makespan
// reduction of HiPIPE vs each baseline; best bandwidth utilisation reached).
#include <functional>
#include <string>
#include <vector>

#include "ncclbot/hipipe/comparison.hpp"

namespace ncclbot::hipipe {

struct StudyCase {
  std::string fabric;
  int nodes = 0, gpus_per_node = 0;
  double bytes = 0;
};

struct Study {
  std::string file;
  SchedulerOptions options;
  std::vector<StudyCase> cases;
};

// InputError (file, line, reason) for anything malformed, unknown fabrics included.
Study read_study(const std::string& path);

struct StudyResult {
  Study study;
  std::vector<Comparison> comparisons;  // one per case, same order
};

// `on_case_done`, if set, is called after each case (a progress line).
StudyResult run_study(const Study& study, const std::function<void()>& on_case_done = {});

// Writes DIR/hipipe_cases.csv (one row per case and scheduler), DIR/hipipe_summary.md and
// DIR/hipipe_summary.json; creates DIR. Returns the summary JSON.
nlohmann::json write_study_outputs(const StudyResult& result, const std::string& out_dir);

}  // namespace ncclbot::hipipe
