#include "cli/replay_report.hpp"

#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/replay_common.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot::cli {

nlohmann::json replay_document(const ReplayReport& report, const ReplayResults& res) {
  nlohmann::json out;
  add_replay_setup_json(out, report);
  out["contexts"] = report.contexts;
  out["configs"] = nlohmann::json::array();
  for (int c = 0; c < res.num_configs; ++c) {
    out["configs"].push_back({{"policy", report.policies[size_t(c)]},
                              {"online", loss_summary_json(summarize_losses(res.online_of(c)))},
                              {"final", loss_summary_json(summarize_losses(res.final_of(c)))}});
    if (!report.call_cost_us.empty()) out["configs"].back()["call_cost_us"] = report.call_cost_us[size_t(c)];
    // The fraction of calls a watch rule watched (the others watch every call).
    if (!res.watched.empty() && parse_policy_spec(report.policies[size_t(c)]).watch)
      out["configs"].back()["watched"] = summarize_losses(res.watched_of(c)).mean;
    if (report.budget_alpha)
      out["configs"].back()["budget"] = {{"replays_broken", report.budget.replays_broken[size_t(c)]},
                                         {"seeds_broken", report.budget.seeds_broken[size_t(c)]},
                                         {"first_break_call", report.budget.first_break_call[size_t(c)]}};
  }
  if (report.budget_alpha)
    out["budget"] = {{"alpha", *report.budget_alpha},
                     {"replays_per_config", report.budget.replays_per_config},
                     {"largest_relative_deviation", report.budget.largest_relative_deviation}};
  return out;
}

void print_replay_report(const ReplayReport& report, const ReplayResults& res, bool json) {
  const nlohmann::json out = replay_document(report, res);
  std::ostream& human = json ? command_err() : command_out();
  human << report.contexts << " contexts x " << report.seeds << " seeds x T=" << report.horizon
        << replay_setup_text(report) << (report.call_cost_us.empty() ? std::string() : " with per-call costs")
        << (report.observation.empty() ? std::string() : " and the cost of watching") << " on "
        << report.backend << "\n";
  for (const auto& c : out["configs"]) {
    human << std::left << std::setw(36) << c["policy"].get<std::string>() << " online mean "
          << std::setprecision(4) << c["online"]["mean"].get<double>() * 100 << "%  p99 "
          << c["online"]["p99"].get<double>() * 100 << "%  >10%: " << c["online"]["above_10pct"]
          << "   final mean " << c["final"]["mean"].get<double>() * 100 << "%";
    if (c.contains("watched")) human << "   watched " << c["watched"].get<double>() * 100 << "%";
    human << "\n";
  }
  if (report.budget_alpha) {
    human << "budget: cumulative mean latency at most " << 1.0 + *report.budget_alpha
          << " x NCCL's default's at every call, " << report.budget.replays_per_config
          << " replays per config; largest relative deviation of a sample from its arm's mean "
          << report.budget.largest_relative_deviation << "\n";
    for (const auto& c : out["configs"]) {
      human << std::left << std::setw(36) << c["policy"].get<std::string>() << " broken in "
            << c["budget"]["replays_broken"] << " replays, at " << c["budget"]["seeds_broken"] << " seeds";
      const int64_t first = c["budget"]["first_break_call"].get<int64_t>();
      if (first > 0) human << "; first at call " << first;
      human << "\n";
    }
  }
  if (json) command_out() << out.dump(2) << "\n";
}

}  // namespace ncclbot::cli
