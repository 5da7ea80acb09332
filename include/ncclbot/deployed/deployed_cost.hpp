#pragma once
// Scoring "as deployed" (docs/replay.md "Scoring as deployed"): what a policy costs the job once it
// runs inside the tuner plugin, from measurements of the built plugin rather than assumptions.
//   - the plugin's own time per getCollInfo, charged on every call of the replay
//     (ReplayJob::call_cost_us), measured by plugin_overhead_bench;
//   - how late measured latencies reach the policy (the replay's --delay), measured by
//     plugin_feedback_delay in each way ranks agree: `local` (one process decides alone) and
//     `leader` (rank 0 decides, followers fetch windows of decisions).
// Stock NCCL (AUTO) pays nothing: it needs no plugin. The oracle cannot be deployed and is charged
// nothing either (it is the replay's lower bound). Supervised selectors deploy as a decision table
// (table mode).
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot {

enum class Deployment { kLocal, kLeader };

// "local" or "leader"; anything else is a UsageError naming both.
Deployment parse_deployment(std::string_view text);
std::string_view deployment_name(Deployment d);

// How the plugin's decisions see latencies in that mode, as the replay's (delay, window)
// (replay/replay.hpp): `local` decides every call after the previous call's latency (0, 1); `leader`
// runs the leader protocol (replay/leader_protocol.hpp: kLeaderPrefetch, kLeaderWindow, the policy
// starting at kLeaderStart).
struct DeployedFeedback {
  int delay;
  int window;
  int policy_start = 0;  // calls of NCCL's own choice before the policy starts (leader: kLeaderStart)
};
DeployedFeedback deployed_feedback(Deployment d);
int deployed_delay(Deployment d);  // deployed_feedback(d).delay

// One row of the plugin's measured costs: a registry name, or "table" (table mode).
struct MeasuredCallCost {
  std::string policy;
  double ns;  // median thread-CPU nanoseconds per getCollInfo
};
// The rows of a `policy,ns_per_call` CSV (lines starting with # are comments): what
// data/plugin_call_costs.csv holds and the library compiles in. Bad text: InputError naming `path`
// and the line.
std::vector<MeasuredCallCost> parse_call_costs(std::string_view text, const std::string& path);

// The plugin's median time per getCollInfo for this policy, in microseconds. A policy with no
// measurement is a UsageError that says how to measure it.
double deployed_call_cost_us(const PolicyConfig& cfg);
// The cost of a policy spec or grid (every point of a grid is of one kind, so one cost).
double deployed_call_cost_us(std::string_view spec_or_grid);
// One cost per config, in order (what ReplayJob::call_cost_us takes).
std::vector<double> deployed_call_costs(const std::vector<PolicySpec>& configs);

}  // namespace ncclbot
