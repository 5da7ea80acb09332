#include "cli/replay_setup_report.hpp"

namespace ncclbot::cli {

void add_replay_setup_json(nlohmann::json& out, const ReplaySetupReport& setup) {
  out["backend"] = setup.backend;
  out["seeds"] = setup.seeds;
  out["horizon"] = setup.horizon;
  out["delay"] = setup.delay;
  if (setup.window > 1) out["window"] = setup.window;
  if (setup.policy_start > 0) out["policy_start"] = setup.policy_start;
  if (!setup.as_deployed.empty()) out["as_deployed"] = setup.as_deployed;
  if (!setup.observation.empty()) out["observation"] = setup.observation;
}

std::string replay_setup_text(const ReplaySetupReport& setup) {
  std::string text;
  if (setup.delay) text += " delay " + std::to_string(setup.delay);
  if (setup.window > 1) text += " window " + std::to_string(setup.window);
  if (setup.policy_start > 0) text += " policy from call " + std::to_string(setup.policy_start);
  if (!setup.as_deployed.empty()) text += " as deployed (" + setup.as_deployed + ")";
  return text;
}

}  // namespace ncclbot::cli
