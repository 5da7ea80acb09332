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
  for (size_t i = 0; i < pol.grid.size(); ++i)
    u.grid.push_back({pol.grid[i], summarize_losses(pick(tuned[i]))});
  for (int i = 1; i < int(u.grid.size()); ++i) {
    const LossSummary& a = u.grid[size_t(i)].tune;
    const LossSummary& b = u.grid[size_t(u.chosen)].tune;
    const double oa = objective_value(a, s.objective), ob = objective_value(b, s.objective);
    if (oa < ob || (oa == ob && a.mean < b.mean)) u.chosen = i;
  }
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
