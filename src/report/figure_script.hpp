#pragma once
// Drawing the report's figures with scripts/study_figures.py (matplotlib), which reads results.json.
#include <nlohmann/json.hpp>
#include <string>

namespace ncclbot::report {

struct FigureOutcome {
  nlohmann::json index = nlohmann::json::array();  // [{"file", "caption"}], empty if none drawn
  std::string note;                                // why no figures were drawn (empty on success)
};

// Runs the script without a shell (base/child_process.hpp); removing the figures of an earlier
// run is the caller's business, as only it knows which files it wrote. The script is $NCCLBOT_FIGURE_SCRIPT
// if set, else scripts/study_figures.py of the source tree; the interpreter is $NCCLBOT_PYTHON or python3.
FigureOutcome draw_figures(const std::string& results_json, const std::string& figures_dir);
// Another of ncclbot's figure scripts (scripts/NAME), e.g. telemetry_figures.py, the same way.
FigureOutcome draw_figures_with(const std::string& script_name, const std::string& input_json,
                                const std::string& figures_dir);

}  // namespace ncclbot::report
