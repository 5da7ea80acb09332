#include "ncclbot/scale/tune_shards.hpp"

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/atomic_file.hpp"
#include "ncclbot/scale/metrics_json.hpp"
#include "ncclbot/scale/replay_on_ranks.hpp"

namespace ncclbot {
namespace {

constexpr std::string_view kChoiceFormat = "ncclbot-tune-choice v1";

// The tune phase's merged results: each policy's chosen point, written as the choice file.
std::vector<TunedPolicy> choose_and_write_choice(const std::vector<ReplayPartial>& parts,
                                                 const nlohmann::json& setup, const ReplayResults& merged,
                                                 const std::string& out_path) {
  const nlohmann::json& id = parts.front().identity;
  std::vector<TunedPolicy> policies = expand_tune_grids(setup.at("grids").get<std::vector<std::string>>());
  size_t points = 0;
  for (const TunedPolicy& tp : policies) points += tp.points.size();
  if (points != size_t(merged.num_configs))
    throw InputError(parts.front().source, 0, "its grids do not expand to its policies");
  choose_tuned_points(merged, parse_tune_objective(setup.at("objective").get<std::string>()), policies);
  write_file_atomic(out_path, tune_choice_document(id, policies).dump(1) + "\n");
  return policies;
}

}  // namespace

nlohmann::json tune_setup_json(const TuneRequest& req, const std::string& tune_nodes,
                               const std::string& score_nodes, const std::string& as_deployed) {
  nlohmann::json setup = {{"grids", req.grids},
                          {"objective", std::string(tune_objective_name(req.objective))},
                          {"tune_nodes", tune_nodes},
                          {"score_nodes", score_nodes},
                          {"tune_contexts", req.tune_contexts},
                          {"score_contexts", req.score_contexts}};
  if (!as_deployed.empty()) setup["as_deployed"] = as_deployed;
  if (req.observation) setup["observation"] = describe_observation_charge(*req.observation);
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

TuneShardPartial replay_tune_shard(const TuneRequest& req, std::string_view phase, ShardSpec shard,
                                   std::string_view sweep_sha256, const nlohmann::json& setup,
                                   const std::string& choice_path) {
  const std::string backend(replay_backend_name(req.backend));
  std::vector<TunedPolicy> policies = expand_tune_grids(req.grids);
  const ReplayJob tune_job = make_tune_job(req, policies);
  const nlohmann::json tune_identity = tune_partial_identity(tune_job, sweep_sha256, backend, "tune", setup);
  ReplayJob job = tune_job;
  nlohmann::json identity = tune_identity;
  if (phase == "score") {
    const nlohmann::json choice = read_tune_choice(choice_path, tune_identity);
    policies = policies_from_choice(choice.at("policies"), choice_path);
    job = make_score_job(req, policies);
    identity = tune_partial_identity(job, sweep_sha256, backend, "score", setup, choice.at("policies"));
  }
  TuneShardPartial out;
  out.total_units = job.configs.size() * job.contexts.size();
  const ReplaySlice slice = run_replay_units(job, shard, req.backend);
  out.bytes = encode_replay_partial(identity, shard, out.total_units, slice);
  out.units = slice.units.size();
  return out;
}

MergedTunePartials merge_tune_phase_partials(const std::vector<ReplayPartial>& parts,
                                             const std::string& out_path) {
  const nlohmann::json& id = parts.front().identity;
  MergedTunePartials out;
  out.phase = id.value("phase", "");
  if (out.phase != "tune" && out.phase != "score")
    throw InputError(parts.front().source, 0, "tune partial of no known phase (written by ncclbot-mpi?)");
  if (out.phase == "score" && !out_path.empty())
    throw UsageError(
        "merge: --out is for --phase tune partials (the choice file); these are --phase score ones");
  if (out.phase == "tune" && out_path.empty())
    throw UsageError(
        "merge: these are --phase tune partials: give --out FILE for the choice that --phase score reads");
  const ReplayResults merged = merge_replay_partials(parts);
  const nlohmann::json& setup = id.at("tune");  // outside the try: json's own error when missing
  try {
    if (out.phase == "tune") {
      out.policies = choose_and_write_choice(parts, setup, merged, out_path);
    } else {
      out.policies = policies_from_choice(id.at("choice"), parts.front().source);
      record_scores(merged, out.policies);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(parts.front().source, 2, std::string("bad tune partial header: ") + e.what());
  }
  return out;
}

std::function<ReplayResults(const ReplayJob&)> tune_engine_on_ranks(ProcessGroup& group,
                                                                    std::string sweep_sha256,
                                                                    ReplayBackend backend) {
  return [&group, digest = std::move(sweep_sha256), backend](const ReplayJob& job) {
    nlohmann::json identity = replay_identity(job, digest, replay_backend_name(backend));
    identity["command"] = "tune";
    return run_replay_on_ranks(group, job, backend, identity);
  };
}

}  // namespace ncclbot
