#pragma once
// Drawing the report's figures with scripts/study_figures.py (matplotlib), which reads results.json.
#include <nlohmann/json.hpp>
#include <string>

namespace ncclbot::report {

struct FigureOutcome {
  nlohmann::json index = nlohmann::json::array();  // [{"file", "caption"}], empty if none drawn
  std::string note;                                // why no figures were drawn (empty on success)
};

// Clears old PNGs in `figures_dir` first so a changed study leaves no stale figure behind. The
// script is $NCCLBOT_FIGURE_SCRIPT if set, else scripts/study_figures.py of the source tree; the
// interpreter is $NCCLBOT_PYTHON or python3.
FigureOutcome draw_figures(const std::string& results_json, const std::string& figures_dir);

}  // namespace ncclbot::report
