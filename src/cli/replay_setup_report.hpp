#pragma once
// What the reports of `replay` and `tune` both say about how the replays ran: the backend, seeds,
// horizon, feedback delay and decision windows, and the --as-deployed mode with its per-call costs.
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace ncclbot::cli {

struct ReplaySetupReport {
  std::string backend;
  int seeds = 0, horizon = 0, delay = 0, window = 1, policy_start = 0;
  std::string as_deployed;           // --as-deployed mode, empty when not given
  std::vector<double> call_cost_us;  // per config (tune: per policy), empty when none was charged
  std::string observation;           // what watching is charged (describe_observation_charge), or empty
};

// The setup a replay job or a tune request ran with: its seeds, horizon and feedback schedule, and
// the --as-deployed mode.
template <typename Schedule>
void set_replay_setup(ReplaySetupReport& to, const Schedule& s, const std::string& as_deployed) {
  std::tie(to.seeds, to.horizon, to.delay, to.window, to.policy_start) =
      std::tie(s.seeds, s.horizon, s.delay, s.window, s.policy_start);
  to.as_deployed = as_deployed;
}

// Adds "backend", "seeds", "horizon", "delay", and "window", "policy_start", "as_deployed",
// "observation" where
// they differ from a plain replay, to a report's JSON document.
void add_replay_setup_json(nlohmann::json& out, const ReplaySetupReport& setup);

// " delay D window W policy from call P as deployed (MODE)" for the human line, each part only
// where it differs from a plain replay.
std::string replay_setup_text(const ReplaySetupReport& setup);

}  // namespace ncclbot::cli
