#include "ncclbot/replay/deployed_cost.hpp"

#include <string>

#include "ncclbot/core/error.hpp"

namespace ncclbot {
namespace {

// Median thread-CPU nanoseconds per getCollInfo, with a latency reported after every call so the
// policy's state keeps changing (the live cost), from
//   build/src/plugin/plugin_overhead_bench build/libnccl-tuner-ncclbot.so 1000000 9
// (the machine, the date and the whole table: docs/performance.md, plugin `getCollInfo` row, and
// docs/plugin.md "Overhead").
// `table` is table mode on a 24-row decision table (what supervised selectors deploy as).
struct MeasuredCost {
  std::string_view policy;  // a registry name, or "table"
  double ns;
};
constexpr MeasuredCost kMeasured[] = {
    {"table", 56.2},    {"random", 35.9}, {"greedy", 27.5}, {"egreedy", 42.3}, {"ucb1", 43.1},
    {"thompson", 86.8}, {"etc", 23.4},    {"swucb", 46.8},  {"ducb", 46.8},
};


}  // namespace

Deployment parse_deployment(std::string_view text) {
  if (text == "local") return Deployment::kLocal;
  if (text == "leader") return Deployment::kLeader;
  throw UsageError("unknown deployment '" + std::string(text) + "' (local or leader)");
}

std::string_view deployment_name(Deployment d) {
  return d == Deployment::kLeader ? "leader" : "local";
}

// Local mode adds no lag (a latency reported before the next call counts for it; calls the job
// keeps in flight on the GPU add to it); leader mode is the protocol of leader_protocol.hpp, whose
// lag plugin_feedback_delay measures (docs/plugin.md "Feedback delay").
DeployedFeedback deployed_feedback(Deployment d) {
  if (d == Deployment::kLeader) return {kLeaderPrefetch, kLeaderWindow, kLeaderStart};
  return {0, 1, 0};
}

int deployed_delay(Deployment d) { return deployed_feedback(d).delay; }

double deployed_call_cost_us(const PolicyConfig& cfg) {
  if (cfg.kind == PolicyKind::kAuto || cfg.kind == PolicyKind::kOracle) return 0.0;
  const std::string_view name =
      policy_use(cfg.kind) == PolicyUse::kSupervised ? "table" : policy_name(cfg.kind);
  for (const MeasuredCost& m : kMeasured)
    if (m.policy == name) return m.ns / 1000.0;
  throw UsageError("no measured plugin cost for policy '" + std::string(name) +
                   "': add its row to plugin_overhead_bench and to src/replay/deployed_cost.cpp "
                   "(docs/replay.md \"Scoring as deployed\")");
}

double deployed_call_cost_us(std::string_view spec_or_grid) {
  return deployed_call_cost_us(parse_policy_grid(spec_or_grid).front().config);
}

std::vector<double> deployed_call_costs(const std::vector<PolicySpec>& configs) {
  std::vector<double> out;
  out.reserve(configs.size());
  for (const PolicySpec& p : configs) out.push_back(deployed_call_cost_us(p.config));
  return out;
}

}  // namespace ncclbot
