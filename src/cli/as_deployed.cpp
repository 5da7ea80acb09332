#include "cli/as_deployed.hpp"

#include <CLI/CLI.hpp>

#include <cmath>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"

namespace ncclbot::cli {

void add_as_deployed_option(CLI::App& app, std::string& mode) {
  app.add_option("--as-deployed", mode,
                 "local or leader: charge each policy the plugin's measured per-call cost and replay the "
                 "plugin's feedback schedule of that mode (leader: its decision windows), unless --delay "
                 "or --window is given");
}

void FeedbackOptions::add_to(CLI::App& app) {
  app.add_option(
      "--delay", delay,
      "feedback delay D: call t's latency reaches the policy just before call t+D+1 (default 0); with "
      "--window W > 1, how many calls before its window a decision window is asked for");
  app.add_option("--window", window,
                 "decision window W: calls decided together from one state, as the plugin's leader mode does "
                 "(default 1; docs/replay.md \"Feedback delay\")");
  app.add_option("--policy-start", policy_start,
                 "calls of NCCL's own pick before the policy decides, as the plugin's leader "
                 "mode plays them while the ranks' cost tables gather (default 0)");
  add_as_deployed_option(app, as_deployed);
  app.add_option("--nccl-version", nccl_version,
                 "with --as-deployed: the NCCL version whose cost of watching a call is charged "
                 "(data/observation_costs.csv; default " +
                     std::string(kDefaultNcclVersion) + ")");
  app.add_option("--observation-cost", observation_cost,
                 "with --as-deployed: what watching a call adds, as a fraction of its latency, for every "
                 "call (0: nothing), instead of the table's values");
}

std::optional<ObservationCharge> FeedbackOptions::observation_charge() const {
  if (!deployment()) {
    if (!nccl_version.empty() || !observation_cost.empty())
      throw UsageError(std::string(nccl_version.empty() ? "--observation-cost" : "--nccl-version") +
                       " prices watching as deployed: give --as-deployed local|leader too");
    return std::nullopt;
  }
  ObservationCharge charge;
  if (!nccl_version.empty()) charge.nccl = nccl_minor_version(nccl_version, "--nccl-version");
  if (!observation_cost.empty()) {
    const auto f = parse_double(observation_cost);
    if (!f || !std::isfinite(*f) || *f < 0.0 || *f > kMaxObservationCost)
      throw UsageError("--observation-cost: '" + observation_cost + "' must be a number in [0, " +
                       format_double(kMaxObservationCost) +
                       "] (the fraction of a watched call's latency added)");
    charge.flat = *f;
  }
  return charge;
}

DeployedFeedback FeedbackOptions::resolve() const {
  DeployedFeedback f{delay.value_or(0), window.value_or(1), policy_start.value_or(0)};
  if (const auto mode = deployment()) {
    const DeployedFeedback deployed = deployed_feedback(*mode);
    if (!delay) f.delay = deployed.delay;
    if (!window) f.window = deployed.window;
    if (!policy_start) f.policy_start = deployed.policy_start;
  }
  return f;
}

std::optional<Deployment> parse_as_deployed(const std::string& mode) {
  if (mode.empty()) return std::nullopt;
  try {
    return parse_deployment(mode);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--as-deployed: ") + e.what());
  }
}

}  // namespace ncclbot::cli
