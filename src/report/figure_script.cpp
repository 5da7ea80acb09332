#include "report/figure_script.hpp"

#include <sys/wait.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ncclbot::report {
namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

FigureOutcome draw_figures(const std::string& results_json, const std::string& figures_dir) {
  namespace fs = std::filesystem;
  FigureOutcome out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(figures_dir, ec))
    if (e.path().extension() == ".png" || e.path().filename() == "index.json") fs::remove(e.path(), ec);

  const char* env_script = std::getenv("NCCLBOT_FIGURE_SCRIPT");
  const std::string script =
      env_script ? env_script : std::string(NCCLBOT_SOURCE_DIR) + "/scripts/study_figures.py";
  const char* env_python = std::getenv("NCCLBOT_PYTHON");
  const std::string python = env_python ? env_python : "python3";
  if (!fs::exists(script)) {
    out.note = "the figure script " + script + " is missing";
    return out;
  }
  const std::string log = figures_dir + "/.figures.log";
  const std::string cmd = quote(python) + " " + quote(script) + " " + quote(results_json) + " " +
                          quote(figures_dir) + " >" + quote(log) + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream lf(log);
  std::stringstream ls;
  ls << lf.rdbuf();
  fs::remove(log, ec);
  if (status != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string msg = ls.str();
    if (msg.size() > 400) msg = "..." + msg.substr(msg.size() - 400);
    out.note = "the figure script failed (is matplotlib installed? scripts/setup.sh installs it): " + msg;
    return out;
  }
  std::ifstream in(figures_dir + "/index.json");
  try {
    out.index = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    out.note = std::string("the figure script wrote no valid index.json: ") + e.what();
    out.index = nlohmann::json::array();
  }
  return out;
}

}  // namespace ncclbot::report
