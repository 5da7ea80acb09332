#include "cli/merge_call.hpp"

#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/atomic_file.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/scale/replay_partial.hpp"
#include "ncclbot/scale/tune_shards.hpp"

namespace ncclbot::cli {
namespace {

// The setup every partial's identity records (scale/replay_partial.hpp); `deployment` holds the
// --as-deployed mode and the observation charge (a tune partial's "tune" object, else the identity).
void read_setup(ReplaySetupReport& report, const nlohmann::json& id, const nlohmann::json& deployment) {
  report.backend = id.at("backend").get<std::string>();
  report.seeds = id.at("seeds").get<int>();
  report.horizon = id.at("horizon").get<int>();
  report.delay = id.value("delay", 0);
  report.window = id.value("window", 1);
  report.policy_start = id.value("policy_start", 0);
  report.call_cost_us = id.value("call_cost_us", std::vector<double>{});
  report.as_deployed = deployment.value("as_deployed", std::string());
  report.observation = deployment.value("observation", std::string());
}

// The report of a score phase, from its partials' identity.
TuneReport score_report_of(const nlohmann::json& id) {
  const nlohmann::json& setup = id.at("tune");
  TuneReport report;
  read_setup(report, id, setup);
  report.objective = setup.at("objective").get<std::string>();
  report.tune_nodes = setup.at("tune_nodes").get<std::string>();
  report.score_nodes = setup.at("score_nodes").get<std::string>();
  report.tune_contexts = setup.at("tune_contexts").size();
  report.score_contexts = id.at("contexts").size();
  return report;
}

// The replay's report, from its partials' identity.
ReplayReport replay_report_of(const nlohmann::json& id) {
  ReplayReport report;
  read_setup(report, id, id);
  report.policies = id.at("policies").get<std::vector<std::string>>();
  report.contexts = id.at("contexts").size();
  return report;
}

// Tune partials: the tune phase's choice (written to `out_path`) or the score phase's report.
void merge_tune(MergeCallResult& r, const std::vector<ReplayPartial>& parts, const std::string& out_path) {
  MergedTunePartials merged = merge_tune_phase_partials(parts, out_path);
  const nlohmann::json& id = parts.front().identity;
  r.tuned = std::move(merged.policies);
  try {
    if (merged.phase == "tune") {
      r.kind = MergeCallResult::Kind::kTuneChoice;
      r.objective = id.at("tune").at("objective").get<std::string>();
      r.out = out_path;
    } else {
      r.kind = MergeCallResult::Kind::kTuneScore;
      r.tune_report = score_report_of(id);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(parts.front().source, 2, std::string("bad tune partial header: ") + e.what());
  }
}

// The tune phase's summary: each policy's chosen point.
nlohmann::json tune_choice_document(const MergeCallResult& r) {
  nlohmann::json summary = {{"phase", "tune"}, {"out", r.out}, {"policies", nlohmann::json::array()}};
  for (const TunedPolicy& tp : r.tuned)
    summary["policies"].push_back({{"grid", tp.grid}, {"tuned", tp.points[size_t(tp.chosen)].text}});
  return summary;
}

// The tune phase's summary and each chosen point's objective on the tune contexts.
void print_tune_choice(const MergeCallResult& r, bool json) {
  std::ostream& human = json ? command_err() : command_out();
  human << "tune phase of " << r.partials << " partial(s) -> " << r.out << "\n";
  for (const TunedPolicy& tp : r.tuned)
    human << std::left << std::setw(40) << tp.points[size_t(tp.chosen)].text << std::setprecision(4)
          << " tune " << r.objective << " " << tp.objective[size_t(tp.chosen)] << "\n";
  if (json) command_out() << tune_choice_document(r).dump(2) << "\n";
}

}  // namespace

MergeCallResult merge_call(const MergeCallOptions& o) {
  if (o.partials.empty()) throw UsageError("merge: name the partial result files");
  if (!o.out_path.empty()) check_output_not_input(o.out_path, o.partials, "--out");
  std::vector<ReplayPartial> parts;
  for (const std::string& path : o.partials) {
    const auto bytes = read_file_if_exists(path);
    if (!bytes) throw InputError(path, 0, "cannot read the partial result");
    parts.push_back(decode_replay_partial(*bytes, path));
  }
  MergeCallResult r;
  r.partials = parts.size();
  const nlohmann::json& id = parts.front().identity;
  if (id.value("command", "") == "tune") {
    merge_tune(r, parts, o.out_path);
    return r;
  }
  if (!o.out_path.empty()) throw UsageError("merge: --out is only for tune --phase tune partials");
  r.replay_results = merge_replay_partials(parts);
  r.replay_report = replay_report_of(id);
  return r;
}

nlohmann::json merge_document(const MergeCallResult& r) {
  switch (r.kind) {
    case MergeCallResult::Kind::kReplay:
      return replay_document(r.replay_report, r.replay_results);
    case MergeCallResult::Kind::kTuneChoice:
      return tune_choice_document(r);
    case MergeCallResult::Kind::kTuneScore:
      return tune_document(r.tune_report, r.tuned);
  }
  return nullptr;
}

void print_merge_result(const MergeCallResult& r, bool json) {
  switch (r.kind) {
    case MergeCallResult::Kind::kReplay:
      print_replay_report(r.replay_report, r.replay_results, json);
      return;
    case MergeCallResult::Kind::kTuneChoice:
      print_tune_choice(r, json);
      return;
    case MergeCallResult::Kind::kTuneScore:
      print_tune_report(r.tune_report, r.tuned, json);
      return;
  }
}

}  // namespace ncclbot::cli
