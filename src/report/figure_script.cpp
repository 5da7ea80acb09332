#include "report/figure_script.hpp"

#include <cstdlib>
#include <filesystem>

#include "base/child_process.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/resource_paths.hpp"

namespace ncclbot::report {

namespace {

FigureOutcome draw(const std::string& script, const std::string& results_json,
                   const std::string& figures_dir) {
  namespace fs = std::filesystem;
  FigureOutcome out;
  const char* env_python = std::getenv("NCCLBOT_PYTHON");
  const std::string python = env_python ? env_python : "python3";
  if (!fs::exists(script)) {
    out.note = "the figure script " + script + " is missing";
    return out;
  }
  const ChildResult r = run_child({python, script, results_json, figures_dir}, ChildOutput::kCapture);
  if (!r.ok()) {
    std::string msg = r.output;
    if (msg.size() > 400) msg = "..." + msg.substr(msg.size() - 400);
    out.note = "the figure script failed (is matplotlib installed? scripts/setup.sh installs it): " + msg;
    return out;
  }
  try {
    out.index = nlohmann::json::parse(read_input_file(figures_dir + "/index.json", kMaxJsonInputBytes));
  } catch (const std::exception& e) {
    out.note = std::string("the figure script wrote no valid index.json: ") + e.what();
    out.index = nlohmann::json::array();
  }
  return out;
}

}  // namespace

FigureOutcome draw_figures(const std::string& results_json, const std::string& figures_dir) {
  const char* env_script = std::getenv("NCCLBOT_FIGURE_SCRIPT");
  return draw(env_script ? env_script : resource_paths().scripts + "/study_figures.py", results_json,
              figures_dir);
}

FigureOutcome draw_figures_with(const std::string& script_name, const std::string& input_json,
                                const std::string& figures_dir) {
  return draw(resource_paths().scripts + "/" + script_name, input_json, figures_dir);
}

}  // namespace ncclbot::report
