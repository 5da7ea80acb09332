#include "cli/tune_shards.hpp"

#include <iomanip>
#include <iostream>

#include "cli/replay_common.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/atomic_file.hpp"

namespace ncclbot::cli {
namespace {

constexpr std::string_view kChoiceFormat = "ncclbot-tune-choice v1";

}  // namespace

nlohmann::json tune_setup_json(const TuneRequest& req, const TuneReport& report) {
  nlohmann::json setup = {{"grids", req.grids},
                          {"objective", report.objective},
                          {"tune_nodes", report.tune_nodes},
                          {"score_nodes", report.score_nodes},
                          {"tune_contexts", req.tune_contexts},
                          {"score_contexts", req.score_contexts}};
  if (!report.as_deployed.empty()) setup["as_deployed"] = report.as_deployed;
  return setup;
}

nlohmann::json tune_partial_identity(const ReplayJob& job, std::string_view sweep_sha256,
                                     std::string_view backend, std::string_view phase,
                                     const nlohmann::json& setup, const nlohmann::json& choice_policies) {
  nlohmann::json id = replay_identity(job, sweep_sha256, backend);
  id["command"] = "tune";
  id["phase"] = std::string(phase);
  id["tune"] = setup;
  if (!choice_policies.is_null()) id["choice"] = choice_policies;
  return id;
}

nlohmann::json tune_choice_document(const nlohmann::json& tune_identity,
                                    const std::vector<TunedPolicy>& policies) {
  nlohmann::json list = nlohmann::json::array();
  for (const TunedPolicy& tp : policies)
    list.push_back(
        {{"grid", tp.grid},
         {"tuned", tp.points[size_t(tp.chosen)].text},
         {"chosen", tp.chosen},
         {"objective", tp.objective},
         {"tune", {{"online", metrics_json(tp.tune_online)}, {"final", metrics_json(tp.tune_final)}}}});
  return {{"format", std::string(kChoiceFormat)}, {"identity", tune_identity}, {"policies", list}};
}

nlohmann::json read_tune_choice(const std::string& path, const nlohmann::json& tune_identity) {
  const auto bytes = read_file_if_exists(path);
  if (!bytes) throw InputError(path, 0, "cannot read the tune choice");
  nlohmann::json doc = nlohmann::json::parse(*bytes, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != kChoiceFormat)
    throw InputError(path, 1,
                     "not a tune choice (write one with `ncclbot merge PARTIAL... --out FILE` of the "
                     "--phase tune partials)");
  if (!doc.contains("identity") || !doc.contains("policies"))
    throw InputError(path, 1, "tune choice without identity or policies");
  const std::string field = first_identity_difference(tune_identity, doc["identity"]);
  if (!field.empty())
    throw InputError(path, 0, "foreign tune choice: its " + field + " differs from this tune's");
  policies_from_choice(doc["policies"], path);  // malformed entries fail here, before any replay
  return doc;
}

std::vector<TunedPolicy> policies_from_choice(const nlohmann::json& policies, const std::string& source) {
  std::vector<TunedPolicy> out;
  try {
    for (const nlohmann::json& p : policies) {
      TunedPolicy tp;
      tp.grid = p.at("grid").get<std::string>();
      tp.points = parse_policy_grid(tp.grid);
      tp.chosen = p.at("chosen").get<int>();
      tp.objective = p.at("objective").get<std::vector<double>>();
      if (tp.chosen < 0 || size_t(tp.chosen) >= tp.points.size() || tp.objective.size() != tp.points.size())
        throw InputError(source, 0, "tune choice of '" + tp.grid + "' does not match its grid");
      tp.tune_online = metrics_from_json(p.at("tune").at("online"));
      tp.tune_final = metrics_from_json(p.at("tune").at("final"));
      out.push_back(std::move(tp));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source, 0, std::string("bad tune choice: ") + e.what());
  }
  return out;
}

int merge_tune_partials(const std::vector<ReplayPartial>& parts, const std::string& out_path, bool json) {
  const nlohmann::json& id = parts.front().identity;
  const std::string phase = id.value("phase", "");
  if (phase != "tune" && phase != "score")
    throw InputError(parts.front().source, 0, "tune partial of no known phase (written by ncclbot-mpi?)");
  if (phase == "score" && !out_path.empty())
    throw UsageError(
        "merge: --out is for --phase tune partials (the choice file); these are --phase score ones");
  if (phase == "tune" && out_path.empty())
    throw UsageError(
        "merge: these are --phase tune partials: give --out FILE for the choice that --phase score reads");
  const ReplayResults merged = merge_replay_partials(parts);
  const nlohmann::json& setup = id.at("tune");
  try {
    if (phase == "tune") {
      std::vector<TunedPolicy> policies =
          expand_tune_grids(setup.at("grids").get<std::vector<std::string>>());
      size_t points = 0;
      for (const TunedPolicy& tp : policies) points += tp.points.size();
      if (points != size_t(merged.num_configs))
        throw InputError(parts.front().source, 0, "its grids do not expand to its policies");
      choose_tuned_points(merged, parse_tune_objective(setup.at("objective").get<std::string>()), policies);
      write_file_atomic(out_path, tune_choice_document(id, policies).dump(1) + "\n");
      nlohmann::json summary = {{"phase", "tune"}, {"out", out_path}, {"policies", nlohmann::json::array()}};
      std::ostream& human = json ? std::cerr : std::cout;
      human << "tune phase of " << parts.size() << " partial(s) -> " << out_path << "\n";
      for (const TunedPolicy& tp : policies) {
        const std::string& tuned = tp.points[size_t(tp.chosen)].text;
        human << std::left << std::setw(40) << tuned << std::setprecision(4) << " tune "
              << setup.at("objective").get<std::string>() << " " << tp.objective[size_t(tp.chosen)] << "\n";
        summary["policies"].push_back({{"grid", tp.grid}, {"tuned", tuned}});
      }
      if (json) std::cout << summary.dump(2) << "\n";
      return 0;
    }
    std::vector<TunedPolicy> policies = policies_from_choice(id.at("choice"), parts.front().source);
    record_scores(merged, policies);
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
    print_tune_report(report, policies, json);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(parts.front().source, 2, std::string("bad tune partial header: ") + e.what());
  }
  return 0;
}

}  // namespace ncclbot::cli
