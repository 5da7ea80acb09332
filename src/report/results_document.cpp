#include "report/results_document.hpp"

#include <set>

#include "ncclbot/sim/fabric.hpp"

#include "ncclbot/core/names.hpp"
#include "ncclbot/deployed/deployed_cost.hpp"
#include "ncclbot/deployed/observation_cost.hpp"
#include "ncclbot/version.hpp"
#include "report/claims_document.hpp"
#include "report/findings_text.hpp"

namespace ncclbot::report {
namespace {

using nlohmann::json;
using namespace ncclbot::study;

json context_json(const Context& c) {
  return {{"fabric", c.fabric},
          {"collective", std::string(collective_name(c.collective))},
          {"nodes", c.nodes},
          {"gpus_per_node", c.gpus_per_node},
          {"bytes", c.bytes}};
}

json context_set_json(const ContextSet& s, size_t count) {
  json j = {{"sweep", s.sweep}, {"contexts", count}};
  if (!s.nodes.empty()) j["nodes"] = s.nodes;
  if (!s.collectives.empty()) {
    json cs = json::array();
    for (auto c : s.collectives) cs.push_back(std::string(collective_name(c)));
    j["collectives"] = cs;
  }
  return j;
}

json summary_json(const LossSummary& s) {
  return {{"mean", s.mean}, {"p99", s.p99}, {"max", s.max}, {"above_10pct", s.above_10pct}};
}

// A statistic with its percentile bootstrap interval and the `ncclbot stats bootstrap` input that
// reproduces it once the cell's "losses" array is added as "x".
json interval_json(const std::vector<double>& losses, Statistic st, const StudySpec& s,
                   const std::string& label) {
  const uint64_t seed = derived_seed(s.seed, "bootstrap/" + label + "/" + statistic_name(st));
  json recompute = {{"statistic", statistic_name(st)},
                    {"level", s.level},
                    {"method", "percentile"},
                    {"resamples", s.bootstrap_resamples},
                    {"seed", seed}};
  if (st == Statistic::kAbove10pct) recompute["threshold"] = 0.1;
  const Interval iv = bootstrap_interval(losses, st, s.level, s.bootstrap_resamples, seed);
  return {{"estimate", iv.estimate}, {"low", iv.low}, {"high", iv.high}, {"recompute", recompute}};
}

json metrics_json(const std::vector<double>& losses, const StudySpec& s, const std::string& label) {
  return {{"mean", interval_json(losses, Statistic::kMean, s, label)},
          {"p99", interval_json(losses, Statistic::kP99, s, label)},
          {"max", interval_json(losses, Statistic::kMax, s, label)},
          {"above_10pct", interval_json(losses, Statistic::kAbove10pct, s, label)}};
}

// The arm a replay settled on at the i-th score context of `sc` (an index into that context's arms,
// replay/replay.hpp), or "?" for none.
std::string decision_name(const PreparedScenario& sc, size_t i, int index) {
  if (index < 0 || i >= sc.score.size()) return "?";
  return arm_label(sc.sweep->arm_at(sc.score[i], index));
}

// The "study" block: the study file's settings as run.
json results_study_json(const PreparedStudy& study, const std::string& backend) {
  const StudySpec& s = study.spec;
  json curve_h = s.curve_horizons;
  return {{"name", s.name},
          {"description", s.description},
          {"file", "study.toml"},
          {"source", s.path},
          {"sha256", study.study_sha256},
          {"seed", s.seed},
          {"seeds", s.seeds},
          {"horizon", s.horizon},
          {"delay", s.delay},
          {"window", s.window},
          {"policy_start", s.policy_start},
          {"as_deployed", s.as_deployed ? json(std::string(deployment_name(*s.as_deployed))) : json()},
          {"observation",
           s.observation_charge() ? json(describe_observation_charge(*s.observation_charge())) : json()},
          {"curve_horizons", curve_h},
          {"loss_vs_horizon",
           {{"horizons", s.loss_vs_horizon},
            {"contexts_per_scenario", s.loss_vs_horizon_contexts},
            {"seeds", s.loss_vs_horizon_seeds}}},
          {"promise_check", s.promise_seeds > 0 ? json{{"seeds", s.promise_seeds},
                                                       {"horizon", s.promise_calls()},
                                                       {"contexts_per_scenario", s.promise_contexts}}
                                                : json()},
          {"objective", metric_name(s.objective)},
          {"loss", loss_kind_name(s.loss)},
          {"alpha", s.alpha},
          {"level", s.level},
          {"bootstrap_resamples", s.bootstrap_resamples},
          {"permutation_resamples", s.permutation_resamples},
          {"backend_requested", s.backend},
          {"backend", backend}};
}

// The "sweeps" block: each sweep's source, digest and size.
json results_sweeps_json(const PreparedStudy& study) {
  json sweeps = json::array();
  for (const auto& ps : study.sweeps) {
    json src;
    if (!ps.source->preset.empty()) {
      src = {{"preset", ps.source->preset}, {"seed", ps.source->seed}};
      if (!ps.source->nodes.empty()) src["nodes"] = ps.source->nodes;
      if (ps.source->samples > 0) src["samples"] = ps.source->samples;
      if (ps.source->hipipe) src["hipipe"] = true;
      if (!ps.source->knobs.empty()) src["knobs"] = ps.source->knobs;
      if (ps.source->price_on_truth) src["price"] = "truth";
      if (ps.source->observe_afresh) src["observe"] = "fresh";
      if (ps.source->deviations != "structured") src["deviations"] = ps.source->deviations;
    } else {
      src = {{"file", ps.source->file}};
    }
    json entry = {{"name", ps.source->name},
                  {"source", src},
                  {"sha256", ps.sha256},
                  {"file", "sweeps/" + ps.source->name + ".csv"},
                  {"contexts", ps.sweep->num_contexts()},
                  {"samples", ps.sweep->samples()}};
    if (!ps.sweep->slot_shaped()) entry["arms_per_context"] = ps.sweep->arms_per_context();
    sweeps.push_back(std::move(entry));
  }
  return sweeps;
}

// The "presets" block: where each number of the synthesised sweeps' presets comes from
// (data/fabrics/NAME.toml's [provenance]), once per preset.
json results_presets_json(const PreparedStudy& study) {
  json presets = json::array();
  std::set<std::string> named;
  for (const auto& ps : study.sweeps) {
    if (ps.source->preset.empty() || !named.insert(ps.source->preset).second) continue;
    const sim::FabricPreset f = sim::load_fabric(ps.source->preset);
    json values = json::array();
    for (const auto& v : f.provenance)
      values.push_back({{"key", v.key}, {"value", v.value}, {"basis", v.basis}, {"source", v.source}});
    presets.push_back({{"name", f.name}, {"values", values}});
  }
  return presets;
}

// The "policies" block: each policy's spec, grid size and, as deployed, its per-call cost.
json results_policies_json(const PreparedStudy& study) {
  const StudySpec& s = study.spec;
  json policies = json::array();
  for (const auto& pp : study.policies) {
    policies.push_back({{"name", pp.spec->name}, {"spec", pp.spec->spec}, {"grid_size", pp.grid.size()}});
    // What each call of this policy was charged (every grid point is of the same kind).
    if (s.as_deployed) policies.back()["call_cost_us"] = deployed_call_cost_us(pp.grid.front());
  }
  return policies;
}

// The "scenarios" block: each scenario's tune and score context sets.
json results_scenarios_json(const PreparedStudy& study) {
  json scenarios = json::array();
  for (const auto& sc : study.scenarios) {
    json ctxs = json::array();
    for (int c : sc.score) ctxs.push_back(context_json(sc.sweep->context(c)));
    json score = context_set_json(sc.spec->score, sc.score.size());
    score["context_list"] = ctxs;
    scenarios.push_back({{"name", sc.spec->name},
                         {"tune", context_set_json(sc.spec->tune, sc.tune.size())},
                         {"score", score}});
  }
  return scenarios;
}

// One entry of the "scores" block: a unit's tuning, losses, curves and metrics.
json results_score_json(const UnitResult& u, const PreparedScenario& sc, const StudySpec& s) {
  const auto& losses = scored_losses(u, s.loss);
  json grid = json::array();
  for (const auto& g : u.grid) grid.push_back({{"config", g.config}, {"tune", summary_json(g.tune)}});
  json curve = json::array();
  for (const auto& c : u.curve) curve.push_back({{"horizon", c.horizon}, {"mean_online", c.mean_online}});
  json long_curve = json::array();
  for (const auto& c : u.loss_vs_horizon)
    long_curve.push_back({{"horizon", c.horizon}, {"mean_online", c.mean_online}});
  json decisions = json::array();
  for (size_t i = 0; i < u.final_slot.size(); ++i) decisions.push_back(decision_name(sc, i, u.final_slot[i]));
  json out = {{"scenario", u.scenario},
              {"policy", u.policy},
              {"config", u.chosen_config()},
              {"tune", {{"grid", grid}, {"chosen", u.chosen}}},
              {"losses", losses},
              {"online", u.online},
              {"final", u.final_loss},
              {"watched", u.watched},
              {"decisions", decisions},
              {"curve", curve},
              {"loss_vs_horizon", long_curve},
              {"metrics", metrics_json(losses, s, u.scenario + "/" + u.policy)}};
  if (u.promise) out["promise"] = to_json(*u.promise);
  return out;
}

// The "pooled" block: all score contexts of all scenarios together, per policy.
json results_pooled_json(const PreparedStudy& study, const std::vector<UnitResult>& units) {
  const StudySpec& s = study.spec;
  const int P = int(study.policies.size());
  json pooled = json::array();
  for (int pi = 0; pi < P; ++pi) {
    std::vector<double> all;
    for (size_t si = 0; si < study.scenarios.size(); ++si) {
      const auto& l = scored_losses(units[si * size_t(P) + size_t(pi)], s.loss);
      all.insert(all.end(), l.begin(), l.end());
    }
    const std::string& name = study.policies[size_t(pi)].spec->name;
    pooled.push_back(
        {{"policy", name}, {"contexts", all.size()}, {"metrics", metrics_json(all, s, "pooled/" + name)}});
  }
  return pooled;
}

// One entry of the "hypotheses" block: the paired test, its Holm decision and the inputs that
// recompute it (`id` counts from 1).
json results_hypothesis_json(const HypothesisResult& h, size_t id) {
  json context_level = nullptr;
  if (h.has_context_level)
    context_level = {{"a_only", h.a_only},
                     {"b_only", h.b_only},
                     {"p", h.context_p},
                     {"note",
                      "contexts above 10% under a only / b only over all score contexts; exact McNemar; "
                      "contexts are not independent units, so this is outside the Holm families"},
                     {"recompute", {{"command", "mcnemar"}, {"input", {{"b", h.a_only}, {"c", h.b_only}}}}}};
  return {
      {"id", id},
      {"family", h.spec.family},
      {"a", h.spec.a},
      {"b", h.spec.b},
      {"metric", metric_name(h.spec.metric)},
      {"statistic", "mean over scenarios of metric(a) - metric(b)"},
      {"scenarios", h.scenarios},
      {"a_values", h.a_values},
      {"b_values", h.b_values},
      {"diffs", h.diffs},
      {"mean_diff", h.mean_diff},
      {"a_better", h.a_better},
      {"b_better", h.b_better},
      {"ties", h.ties},
      {"smallest_attainable_p", h.smallest_p},
      {"alternative", "two-sided"},
      {"p", h.test.p},
      {"exact", h.test.exact},
      {"sign_vectors", h.test.sign_vectors},
      {"p_holm", h.p_holm},
      {"reject", h.reject},
      {"context_level", context_level},
      {"recompute",
       {{"command", "permutation"},
        {"input",
         {{"diffs", h.diffs}, {"alternative", "two-sided"}, {"resamples", h.resamples}, {"seed", h.seed}}}}}};
}

// The "families" block: each Holm family's members, limits and the input that recomputes it.
json results_families_json(const SignificanceResult& significance) {
  json fams = json::array();
  for (const auto& f : significance.families) {
    json ids = json::array();
    json p = json::array();
    for (int m : f.members) {
      ids.push_back(m + 1);
      p.push_back(significance.hypotheses[size_t(m)].test.p);
    }
    fams.push_back({{"name", f.name},
                    {"hypotheses", ids},
                    {"size", f.size},
                    {"scenarios", f.scenarios},
                    {"smallest_attainable_p", f.smallest_p},
                    {"max_rejectable", f.max_rejectable},
                    {"rejected", f.rejected},
                    {"recompute", {{"command", "holm"}, {"input", {{"p", p}}}}}});
  }
  return fams;
}

// The "scores" block: one entry per unit, scenario-major as the units are laid out.
json results_scores_json(const PreparedStudy& study, const std::vector<UnitResult>& units) {
  const StudySpec& s = study.spec;
  const int P = int(study.policies.size());
  json scores = json::array();
  for (size_t si = 0; si < study.scenarios.size(); ++si)
    for (int pi = 0; pi < P; ++pi)
      scores.push_back(results_score_json(units[si * size_t(P) + size_t(pi)], study.scenarios[si], s));
  return scores;
}

// The "hypotheses" block, one entry per tested hypothesis.
json results_hypotheses_json(const SignificanceResult& significance) {
  json hyps = json::array();
  for (size_t i = 0; i < significance.hypotheses.size(); ++i)
    hyps.push_back(results_hypothesis_json(significance.hypotheses[i], i + 1));
  return hyps;
}

}  // namespace

json build_results(const PreparedStudy& study, const std::vector<UnitResult>& units,
                   const SignificanceResult& significance, const std::string& backend) {
  json out;
  out["schema"] = kResultsSchema;
  out["program"] = {{"name", "ncclbot"}, {"version", std::string(kVersion)}};
  out["study"] = results_study_json(study, backend);
  out["sweeps"] = results_sweeps_json(study);
  out["presets"] = results_presets_json(study);
  out["policies"] = results_policies_json(study);
  out["scenarios"] = results_scenarios_json(study);
  out["scores"] = results_scores_json(study, units);
  out["pooled"] = results_pooled_json(study, units);
  out["hypotheses"] = results_hypotheses_json(significance);
  if (!study.spec.claims.empty()) out["against_original"] = against_original(study, units, significance);
  out["families"] = results_families_json(significance);
  out["findings"] = findings_text(out);
  return out;
}

}  // namespace ncclbot::report
