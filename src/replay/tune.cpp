#include "ncclbot/replay/tune.hpp"

#include <cmath>

#include "ncclbot/core/error.hpp"
#include "ncclbot/replay/supervised.hpp"

namespace ncclbot {

TuneObjective parse_tune_objective(const std::string& text) {
  if (text == "mean") return TuneObjective::kMean;
  if (text == "p99") return TuneObjective::kP99;
  if (text == "above_10pct") return TuneObjective::kAbove10pct;
  throw UsageError("--objective: unknown objective '" + text + "' (valid: mean, p99, above_10pct)");
}

std::string_view tune_objective_name(TuneObjective objective) {
  switch (objective) {
    case TuneObjective::kP99:
      return "p99";
    case TuneObjective::kAbove10pct:
      return "above_10pct";
    default:
      return "mean";
  }
}

double objective_value(const LossSummary& s, TuneObjective objective) {
  switch (objective) {
    case TuneObjective::kP99:
      return s.p99;
    case TuneObjective::kAbove10pct:
      return double(s.above_10pct);
    default:
      return s.mean;
  }
}

namespace {

SeedSpread spread(const std::vector<double>& x) {
  SeedSpread s;
  if (x.empty()) return s;
  double sum = 0;
  s.min = s.max = x[0];
  for (double v : x) {
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.mean = sum / double(x.size());
  if (s.min == s.max) s.mean = s.min;  // identical per-seed values: no rounding residue in mean or sd
  if (x.size() > 1 && s.min != s.max) {
    double ss = 0;
    for (double v : x) ss += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(ss / double(x.size() - 1));
  }
  return s;
}

}  // namespace

MetricsWithSpread metrics_with_spread(const ReplayResults& r, int config, bool online) {
  MetricsWithSpread m;
  m.summary = summarize_losses(online ? r.online_of(config) : r.final_of(config));
  if (r.online_per_seed.empty()) return m;
  std::vector<double> means, p99s, maxs, aboves;
  for (int s = 0; s < r.seeds; ++s) {
    const LossSummary ls = summarize_losses(online ? r.online_of(config, s) : r.final_of(config, s));
    means.push_back(ls.mean);
    p99s.push_back(ls.p99);
    maxs.push_back(ls.max);
    aboves.push_back(double(ls.above_10pct));
  }
  m.mean = spread(means);
  m.p99 = spread(p99s);
  m.max = spread(maxs);
  m.above_10pct = spread(aboves);
  return m;
}

std::vector<TunedPolicy> tune_and_score(const TuneRequest& req) {
  if (!req.sweep) throw UsageError("tune: no sweep");
  if (req.grids.empty()) throw UsageError("tune: no --policy given");
  if (req.tune_contexts.empty()) throw UsageError("tune: no tune context selected (see --tune-nodes)");
  if (req.score_contexts.empty()) throw UsageError("tune: no score context selected (see --score-nodes)");
  const Sweep& sweep = *req.sweep;

  std::vector<TunedPolicy> out;
  ReplayJob tune_job;
  tune_job.sweep = &sweep;
  tune_job.contexts = req.tune_contexts;
  tune_job.seeds = req.seeds;
  tune_job.seed_base = req.seed_base;
  tune_job.horizon = req.horizon;
  tune_job.threads = req.threads;
  tune_job.keep_per_seed = true;
  std::vector<int> first_point;
  for (const std::string& grid : req.grids) {
    TunedPolicy tp;
    tp.grid = grid;
    tp.points = parse_policy_grid(grid);
    first_point.push_back(int(tune_job.configs.size()));
    for (const PolicySpec& p : tp.points) {
      if (p.config.kind == PolicyKind::kAuto && !sweep.has_prior())
        throw UsageError("policy 'auto' needs a sweep with a prior_us column");
      tune_job.configs.push_back(p);
      tune_job.fixed_slots.push_back(is_supervised(p.config.kind)
                                         ? supervised_decisions(p.config, sweep, req.tune_contexts, true)
                                         : std::vector<int>{});
    }
    out.push_back(std::move(tp));
  }
  const ReplayResults tuned = (req.engine ? req.engine(tune_job) : run_replay(tune_job, req.backend));

  ReplayJob score_job = tune_job;
  score_job.contexts = req.score_contexts;
  score_job.configs.clear();
  score_job.fixed_slots.clear();
  for (size_t g = 0; g < out.size(); ++g) {
    TunedPolicy& tp = out[g];
    for (size_t i = 0; i < tp.points.size(); ++i) {
      const LossSummary s = summarize_losses(tuned.online_of(first_point[g] + int(i)));
      tp.objective.push_back(objective_value(s, req.objective));
      if (tp.objective[i] < tp.objective[size_t(tp.chosen)]) tp.chosen = int(i);  // ties: first point
    }
    const int at = first_point[g] + tp.chosen;
    tp.tune_online = metrics_with_spread(tuned, at, true);
    tp.tune_final = metrics_with_spread(tuned, at, false);
    const PolicySpec& chosen = tp.points[size_t(tp.chosen)];
    score_job.configs.push_back(chosen);
    score_job.fixed_slots.push_back(is_supervised(chosen.config.kind)
                                        ? supervised_decisions(chosen.config, sweep, req.tune_contexts, false)
                                        : std::vector<int>{});
  }
  const ReplayResults scored = (req.engine ? req.engine(score_job) : run_replay(score_job, req.backend));
  for (size_t g = 0; g < out.size(); ++g) {
    out[g].score_online = metrics_with_spread(scored, int(g), true);
    out[g].score_final = metrics_with_spread(scored, int(g), false);
  }
  return out;
}

}  // namespace ncclbot
