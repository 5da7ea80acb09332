#pragma once
// `ncclbot run`: a study file to a report folder, resumably. Work is split into units (one per
// scenario and policy) checkpointed atomically under DIR/units/; a rerun of the same command after
// an interruption (even kill -9) reuses the completed units and writes byte-identical outputs.
// Nothing time-dependent is written into the outputs; durations go to stderr only.
// It sits above study/ (the data and the statistics) and report/ (the documents written from
// them), which is why it lives in a folder of its own: study/ never includes report/.
#include <string>
#include <vector>

namespace ncclbot::study {

struct RunOptions {
  std::string out_dir;
  std::string backend;   // empty = the study's choice
  int threads = 0;       // 0 = all cores
  bool figures = true;   // draw figures with the Python script
  bool replace = false;  // take over a folder another study (or command) wrote (study/run_folder.hpp)
};

struct VariantSummary;

struct RunSummary {
  std::string report_md, report_html, results_json;
  int units = 0, units_reused = 0;
  std::vector<VariantSummary> variants;  // the study's [[variant]] runs, in DIR/variants/
};

struct VariantSummary {
  std::string name, folder;
  RunSummary summary;
};

RunSummary run_study(const std::string& study_path, const RunOptions& options);

}  // namespace ncclbot::study
