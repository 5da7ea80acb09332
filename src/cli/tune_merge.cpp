#include "cli/tune_merge.hpp"

#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/tune_report.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/scale/tune_shards.hpp"

namespace ncclbot::cli {
namespace {

// The tune phase's summary: each policy's chosen point and its objective on the tune contexts.
void print_tune_choice(const std::vector<TunedPolicy>& policies, size_t partials, const std::string& out_path,
                       const std::string& objective, bool json) {
  nlohmann::json summary = {{"phase", "tune"}, {"out", out_path}, {"policies", nlohmann::json::array()}};
  std::ostream& human = json ? command_err() : command_out();
  human << "tune phase of " << partials << " partial(s) -> " << out_path << "\n";
  for (const TunedPolicy& tp : policies) {
    const std::string& tuned = tp.points[size_t(tp.chosen)].text;
    human << std::left << std::setw(40) << tuned << std::setprecision(4) << " tune " << objective << " "
          << tp.objective[size_t(tp.chosen)] << "\n";
    summary["policies"].push_back({{"grid", tp.grid}, {"tuned", tuned}});
  }
  if (json) command_out() << summary.dump(2) << "\n";
}

// The report of a score phase, from its partials' identity.
TuneReport score_report_of(const nlohmann::json& id) {
  const nlohmann::json& setup = id.at("tune");
  TuneReport report;
  report.backend = id.at("backend").get<std::string>();
  report.objective = setup.at("objective").get<std::string>();
  report.tune_nodes = setup.at("tune_nodes").get<std::string>();
  report.score_nodes = setup.at("score_nodes").get<std::string>();
  report.tune_contexts = setup.at("tune_contexts").size();
  report.score_contexts = id.at("contexts").size();
  report.seeds = id.at("seeds").get<int>();
  report.horizon = id.at("horizon").get<int>();
  report.delay = id.at("delay").get<int>();
  report.window = id.value("window", 1);
  report.policy_start = id.value("policy_start", 0);
  report.call_cost_us = id.value("call_cost_us", std::vector<double>{});
  report.as_deployed = setup.value("as_deployed", std::string());
  report.observation = setup.value("observation", std::string());
  return report;
}

}  // namespace

int merge_tune_partials(const std::vector<ReplayPartial>& parts, const std::string& out_path, bool json) {
  const MergedTunePartials merged = merge_tune_phase_partials(parts, out_path);
  const nlohmann::json& id = parts.front().identity;
  try {
    if (merged.phase == "tune")
      print_tune_choice(merged.policies, parts.size(), out_path,
                        id.at("tune").at("objective").get<std::string>(), json);
    else
      print_tune_report(score_report_of(id), merged.policies, json);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(parts.front().source, 2, std::string("bad tune partial header: ") + e.what());
  }
  return 0;
}

}  // namespace ncclbot::cli
