#include "cli/tune_report.hpp"

#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/replay_common.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {

nlohmann::json tune_document(const TuneReport& report, const std::vector<TunedPolicy>& tuned) {
  nlohmann::json out;
  add_replay_setup_json(out, report);
  out["objective"] = report.objective;
  out["tune_contexts"] = report.tune_contexts;
  out["score_contexts"] = report.score_contexts;
  out["policies"] = nlohmann::json::array();
  for (const auto& tp : tuned) {
    nlohmann::json grid = nlohmann::json::array();
    for (size_t i = 0; i < tp.points.size(); ++i)
      grid.push_back({{"policy", tp.points[i].text}, {"objective", tp.objective[i]}});
    out["policies"].push_back(
        {{"grid", tp.grid},
         {"grid_size", tp.points.size()},
         {"tuned", tp.points[size_t(tp.chosen)].text},
         {"grid_points", grid},
         {"tune", {{"online", metrics_json(tp.tune_online)}, {"final", metrics_json(tp.tune_final)}}},
         {"score", {{"online", metrics_json(tp.score_online)}, {"final", metrics_json(tp.score_final)}}}});
    const size_t g = out["policies"].size() - 1;
    if (g < report.call_cost_us.size()) out["policies"].back()["call_cost_us"] = report.call_cost_us[g];
  }
  return out;
}

void print_tune_report(const TuneReport& report, const std::vector<TunedPolicy>& tuned, bool json) {
  std::ostream& human = json ? command_err() : command_out();
  human << "tuned on " << report.tune_contexts << " contexts (nodes " << report.tune_nodes << "), scored on "
        << report.score_contexts << " (nodes " << report.score_nodes << "), " << report.seeds
        << " seeds, T=" << report.horizon << replay_setup_text(report) << ", objective " << report.objective
        << "\n";
  for (const auto& tp : tuned)
    human << std::left << std::setw(40) << tp.points[size_t(tp.chosen)].text << std::setprecision(4)
          << " tune online mean " << tp.tune_online.summary.mean * 100 << "%   score online mean "
          << tp.score_online.summary.mean * 100 << "% (sd over seeds " << tp.score_online.mean.sd * 100
          << ")  p99 " << tp.score_online.summary.p99 * 100
          << "%  >10%: " << tp.score_online.summary.above_10pct << "\n";
  if (json) command_out() << tune_document(report, tuned).dump(2) << "\n";
}

}  // namespace ncclbot::cli
