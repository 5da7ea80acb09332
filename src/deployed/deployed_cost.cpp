#include "ncclbot/deployed/deployed_cost.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "ncclbot/core/data_rows.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot_generated/plugin_call_costs.hpp"

namespace ncclbot {
namespace {

// The costs compiled in from data/plugin_call_costs.csv (cmake/data_tables.cmake).
const std::vector<MeasuredCallCost>& compiled_call_costs() {
  static const std::vector<MeasuredCallCost> costs =
      parse_call_costs(generated::kPluginCallCostsCsv, std::string(generated::kPluginCallCostsPath));
  return costs;
}

}  // namespace

std::vector<MeasuredCallCost> parse_call_costs(std::string_view text, const std::string& path) {
  std::vector<MeasuredCallCost> out;
  for_each_data_row(
      text, "policy,ns_per_call", path,
      [&](long line_no, std::string_view line, const std::vector<std::string_view>& f) {
        const std::string policy(f[0]);
        const std::optional<double> ns = f.size() == 2 ? parse_double(f[1]) : std::nullopt;
        if (policy.empty() || !ns || !std::isfinite(*ns) || *ns <= 0)
          throw InputError(
              path, line_no,
              "expected 'POLICY,NANOSECONDS' with a positive number, not '" + std::string(line) + "'");
        if (policy != "table" && !policy_kind_named(policy))
          throw InputError(path, line_no, "'" + policy + "' is neither a registered policy nor 'table'");
        for (const MeasuredCallCost& m : out)
          if (m.policy == policy) throw InputError(path, line_no, "policy '" + policy + "' given twice");
        out.push_back({policy, *ns});
      });
  return out;
}

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

int deployed_delay(Deployment d) {
  return deployed_feedback(d).delay;
}

double deployed_call_cost_us(const PolicyConfig& cfg) {
  if (cfg.kind == PolicyKind::kAuto || cfg.kind == PolicyKind::kOracle) return 0.0;
  const std::string_view name =
      policy_use(cfg.kind) == PolicyUse::kSupervised ? "table" : policy_name(cfg.kind);
  for (const MeasuredCallCost& m : compiled_call_costs())
    if (m.policy == name) return m.ns / 1000.0;
  throw UsageError("no measured plugin cost for policy '" + std::string(name) +
                   "' in data/plugin_call_costs.csv: measure it with plugin_overhead_bench --write-costs "
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
