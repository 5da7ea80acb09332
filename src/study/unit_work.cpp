#include "study/unit_work.hpp"

#include <algorithm>
#include <map>

#include "ncclbot/replay/policy_spec.hpp"
#include "study/policy_replay.hpp"

namespace ncclbot::study {
namespace {

ReplaySettings replay_settings(const StudySpec& s, const EngineOptions& engine) {
  ReplaySettings rs;
  rs.seeds = s.seeds;
  // Every policy sees the same seeds (common random numbers): paired comparisons then differ by the
  // policies, not by the luck of the draws.
  rs.seed = s.seed;
  rs.horizon = s.horizon;
  rs.delay = s.delay;
  rs.window = s.window;
  rs.policy_start = s.policy_start;
  rs.charge_call_costs = s.as_deployed.has_value();
  rs.observation = s.observation_charge();
  rs.backend = engine.backend;
  rs.threads = engine.threads;
  return rs;
}

// Up to `most` of `contexts`, evenly spaced over the list.
std::vector<int> evenly_spaced(const std::vector<int>& contexts, int most) {
  const size_t n = contexts.size(), want = std::min(n, size_t(most));
  std::vector<int> out;
  for (size_t k = 0; k < want; ++k) out.push_back(contexts[k * n / want]);
  return out;
}

bool runs_conservative(const std::string& config) {
  return parse_policy_spec(config).conservative.has_value();
}

// The units `at` (indices into `units`), all of one scenario: each phase is one replay job over
// all of them.
void compute_scenario(const PreparedStudy& study, const std::vector<const WorkUnit*>& units,
                      const std::vector<size_t>& at, const ReplaySettings& rs,
                      const std::function<void(size_t, UnitResult&&)>& done) {
  const StudySpec& s = study.spec;
  const PreparedScenario& sc = study.scenarios.at(size_t(units[at.front()]->scenario));
  const auto pick = [&](const ConfigLosses& l) {
    return s.loss == LossKind::kOnline ? l.online : l.final_loss;
  };

  // Tuning: every unit's grid, one after another, in one job.
  std::vector<std::string> grids;
  for (size_t k : at) {
    const auto& grid = study.policies.at(size_t(units[k]->policy)).grid;
    grids.insert(grids.end(), grid.begin(), grid.end());
  }
  const std::vector<ConfigLosses> tuned = tune_configs(*sc.sweep, sc.tune, grids, rs);
  std::vector<UnitResult> results;
  std::vector<std::string> chosen;
  size_t first = 0;
  for (size_t k : at) {
    const WorkUnit& unit = *units[k];
    const PreparedPolicy& pol = study.policies.at(size_t(unit.policy));
    UnitResult& u = results.emplace_back();
    u.scenario = sc.spec->name;
    u.policy = pol.spec->name;
    u.spec = pol.spec->spec;
    u.inputs_sha256 = unit.inputs_sha256;
    std::vector<LossSummary> summaries;
    for (size_t i = 0; i < pol.grid.size(); ++i) {
      summaries.push_back(summarize_losses(pick(tuned[first + i])));
      u.grid.push_back({pol.grid[i], summaries.back()});
    }
    first += pol.grid.size();
    u.chosen = choose_grid_point(summaries, s.objective);
    chosen.push_back(u.chosen_config());
  }

  // Scoring every unit's frozen choice, then the learning curve's shorter horizons.
  const std::vector<ConfigLosses> scored = score_configs(*sc.sweep, sc.tune, sc.score, chosen, rs, true);
  for (size_t j = 0; j < results.size(); ++j) {
    results[j].online = scored[j].online;
    results[j].final_loss = scored[j].final_loss;
    results[j].final_slot = scored[j].final_slot;
    results[j].watched = scored[j].watched;
  }
  for (int h : s.curve_horizons) {
    std::vector<ConfigLosses> short_runs;
    if (h != s.horizon) {
      ReplaySettings short_run = rs;
      short_run.horizon = h;
      short_runs = score_configs(*sc.sweep, sc.tune, sc.score, chosen, short_run, false);
    }
    for (size_t j = 0; j < results.size(); ++j)
      results[j].curve.push_back(
          {h, summarize_losses(h == s.horizon ? results[j].online : short_runs[j].online).mean});
  }
  if (!s.loss_vs_horizon.empty()) {
    const std::vector<int> contexts = evenly_spaced(sc.score, s.loss_vs_horizon_contexts);
    const auto long_curves =
        loss_vs_horizon(*sc.sweep, sc.tune, contexts, chosen, rs, s.loss_vs_horizon, s.loss_vs_horizon_seeds);
    for (size_t j = 0; j < results.size(); ++j)
      for (size_t h = 0; h < s.loss_vs_horizon.size(); ++h)
        results[j].loss_vs_horizon.push_back({s.loss_vs_horizon[h], long_curves[j][h]});
  }
  if (s.promise_seeds > 0) {
    const std::vector<int> contexts = evenly_spaced(sc.score, s.promise_contexts);
    for (size_t j = 0; j < results.size(); ++j)
      if (runs_conservative(chosen[j]))
        results[j].promise =
            check_promise(*sc.sweep, sc.tune, contexts, chosen[j], rs, s.promise_seeds, s.promise_calls());
  }
  for (size_t j = 0; j < results.size(); ++j) done(at[j], std::move(results[j]));
}

}  // namespace

void compute_units_together(const PreparedStudy& study, const std::vector<const WorkUnit*>& units,
                            const EngineOptions& engine,
                            const std::function<void(size_t, UnitResult&&)>& done) {
  const ReplaySettings rs = replay_settings(study.spec, engine);
  std::map<int, std::vector<size_t>> by_scenario;
  for (size_t k = 0; k < units.size(); ++k) by_scenario[units[k]->scenario].push_back(k);
  for (const auto& [scenario, at] : by_scenario) compute_scenario(study, units, at, rs, done);
}

void compute_units(const PreparedStudy& study, const std::vector<const WorkUnit*>& units,
                   const EngineOptions& engine, const std::function<void(size_t, UnitResult&&)>& done) {
  if (engine.backend == "cuda") {
    compute_units_together(study, units, engine, done);
    return;
  }
  for (size_t k = 0; k < units.size(); ++k) done(k, compute_unit(study, *units[k], engine));
}

UnitResult compute_unit(const PreparedStudy& study, const WorkUnit& unit, const EngineOptions& engine) {
  UnitResult out;
  compute_units_together(study, {&unit}, engine, [&](size_t, UnitResult&& u) { out = std::move(u); });
  return out;
}

}  // namespace ncclbot::study
