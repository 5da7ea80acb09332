#pragma once
// `--as-deployed local|leader` on replay and tune (docs/replay.md "Scoring as deployed"): every
// config pays the plugin's measured per-call cost, and the feedback delay is the one the plugin
// showed in that mode unless --delay is given.
#include <optional>
#include <string>

#include "ncclbot/deployed/deployed_cost.hpp"
#include "ncclbot/deployed/observation_cost.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ncclbot::cli {

void add_as_deployed_option(CLI::App& app, std::string& mode);

// The mode of --as-deployed; nullopt when it was not given, a UsageError for an unknown mode.
std::optional<Deployment> parse_as_deployed(const std::string& mode);

// --delay, --window, --policy-start and --as-deployed together (replay, tune): the feedback
// schedule of every replay (replay/replay.hpp). --as-deployed gives the plugin's (delay, window,
// policy start) in that mode; --delay, --window or --policy-start, when given, replace that part.
struct FeedbackOptions {
  std::optional<int> delay;         // --delay, nullopt: 0, or the deployment's
  std::optional<int> window;        // --window, nullopt: 1, or the deployment's
  std::optional<int> policy_start;  // --policy-start, nullopt: 0, or the deployment's
  std::string as_deployed;
  std::string nccl_version;      // --nccl-version, empty: kDefaultNcclVersion
  std::string observation_cost;  // --observation-cost F, empty: the table's

  void add_to(CLI::App& app);
  // The schedule these options give (after parsing), and the deployment when one was asked for.
  DeployedFeedback resolve() const;
  // resolve()'s delay, window and policy start, written into a replay job or a tune request.
  template <typename Schedule>
  void apply_to(Schedule& to) const {
    const DeployedFeedback f = resolve();
    to.delay = f.delay;
    to.window = f.window;
    to.policy_start = f.policy_start;
  }
  std::optional<Deployment> deployment() const { return parse_as_deployed(as_deployed); }
  // What watching costs (deployed/observation_cost.hpp): nullopt unless --as-deployed is given; the
  // table's values for --nccl-version, or --observation-cost for every call. Either option without
  // --as-deployed is a UsageError.
  std::optional<ObservationCharge> observation_charge() const;
};

}  // namespace ncclbot::cli
