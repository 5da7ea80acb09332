#include "study/unit_work.hpp"

#include "study/policy_replay.hpp"

namespace ncclbot::study {

UnitResult compute_unit(const PreparedStudy& study, const WorkUnit& unit, const EngineOptions& engine) {
  const StudySpec& s = study.spec;
  const PreparedScenario& sc = study.scenarios.at(size_t(unit.scenario));
  const PreparedPolicy& pol = study.policies.at(size_t(unit.policy));
  ReplaySettings rs;
  rs.seeds = s.seeds;
  // Every policy sees the same seeds (common random numbers): paired comparisons then differ by the
  // policies, not by the luck of the draws.
  rs.seed = s.seed;
  rs.horizon = s.horizon;
  rs.delay = s.delay;
  rs.charge_call_costs = s.as_deployed.has_value();
  rs.backend = engine.backend;
  rs.threads = engine.threads;

  UnitResult u;
  u.scenario = sc.spec->name;
  u.policy = pol.spec->name;
  u.spec = pol.spec->spec;
  u.inputs_sha256 = unit.inputs_sha256;
  const auto pick = [&](const ConfigLosses& l) {
    return s.loss == LossKind::kOnline ? l.online : l.final_loss;
  };
  const std::vector<ConfigLosses> tuned = tune_configs(*sc.sweep, sc.tune, pol.grid, rs);
  std::vector<LossSummary> summaries;
  for (size_t i = 0; i < pol.grid.size(); ++i) {
    summaries.push_back(summarize_losses(pick(tuned[i])));
    u.grid.push_back({pol.grid[i], summaries.back()});
  }
  u.chosen = choose_grid_point(summaries, s.objective);
  const ConfigLosses scored = score_config(*sc.sweep, sc.tune, sc.score, u.chosen_config(), rs, true);
  u.online = scored.online;
  u.final_loss = scored.final_loss;
  u.final_slot = scored.final_slot;
  for (int h : s.curve_horizons) {
    double mean = 0;
    if (h == s.horizon) {
      mean = summarize_losses(u.online).mean;
    } else {
      ReplaySettings short_run = rs;
      short_run.horizon = h;
      mean = summarize_losses(
                 score_config(*sc.sweep, sc.tune, sc.score, u.chosen_config(), short_run, false).online)
                 .mean;
    }
    u.curve.push_back({h, mean});
  }
  return u;
}

}  // namespace ncclbot::study
