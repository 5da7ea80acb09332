#include "ncclbot/tune/tune.hpp"
#include "ncclbot/core/command_streams.hpp"

#include <cmath>
#include <iostream>

#include "ncclbot/core/error.hpp"
#include "ncclbot/deployed/deployed_cost.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/supervised/supervised.hpp"

namespace ncclbot {

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

// A job of the request's seeds and horizon on `contexts`, every seed's losses kept (the spread
// across seeds needs them), no configs yet.
ReplayJob job_on(const TuneRequest& req, const std::vector<int>& contexts) {
  ReplayJob job;
  job.sweep = req.sweep;
  job.contexts = contexts;
  job.seeds = req.seeds;
  job.seed_base = req.seed_base;
  job.horizon = req.horizon;
  job.delay = req.delay;
  job.window = req.window;
  job.policy_start = req.policy_start;
  job.threads = req.threads;
  job.progress = req.progress;
  job.keep_per_seed = true;
  if (req.observation && req.sweep) job.observation_cost = observation_costs(*req.sweep, *req.observation);
  return job;
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

std::vector<TunedPolicy> expand_tune_grids(const std::vector<std::string>& grids) {
  std::vector<TunedPolicy> out;
  for (const std::string& grid : grids) {
    TunedPolicy tp;
    tp.grid = grid;
    tp.points = parse_policy_grid(grid);
    out.push_back(std::move(tp));
  }
  return out;
}

ReplayJob make_tune_job(const TuneRequest& req, const std::vector<TunedPolicy>& policies) {
  if (!req.sweep) throw UsageError("tune: no sweep");
  if (req.grids.empty()) throw UsageError("tune: no --policy given");
  if (req.tune_contexts.empty()) throw UsageError("tune: no tune context selected (see --tune-nodes)");
  if (req.score_contexts.empty()) throw UsageError("tune: no score context selected (see --score-nodes)");
  const Sweep& sweep = *req.sweep;
  ReplayJob job = job_on(req, req.tune_contexts);
  for (const TunedPolicy& tp : policies)
    for (const PolicySpec& p : tp.points) {
      if (p.config.kind == PolicyKind::kAuto && !sweep.has_prior())
        throw UsageError("policy 'auto' needs a sweep with a prior_us column");
      job.configs.push_back(p);
      job.fixed_slots.push_back(is_supervised(p.config.kind)
                                    ? supervised_decisions(p.config, sweep, req.tune_contexts, true)
                                    : std::vector<int>{});
    }
  if (req.charge_call_costs) job.call_cost_us = deployed_call_costs(job.configs);
  return job;
}

void choose_tuned_points(const ReplayResults& tuned, TuneObjective objective,
                         std::vector<TunedPolicy>& policies) {
  int first_point = 0;
  for (TunedPolicy& tp : policies) {
    tp.objective.clear();
    std::vector<LossSummary> summaries;
    for (size_t i = 0; i < tp.points.size(); ++i) {
      summaries.push_back(summarize_losses(tuned.online_of(first_point + int(i))));
      tp.objective.push_back(objective_value(summaries.back(), objective));
    }
    tp.chosen = choose_grid_point(summaries, objective);
    const int at = first_point + tp.chosen;
    tp.tune_online = metrics_with_spread(tuned, at, true);
    tp.tune_final = metrics_with_spread(tuned, at, false);
    first_point += int(tp.points.size());
  }
}

ReplayJob make_score_job(const TuneRequest& req, const std::vector<TunedPolicy>& policies) {
  ReplayJob job = job_on(req, req.score_contexts);
  for (const TunedPolicy& tp : policies) {
    const PolicySpec& chosen = tp.points[size_t(tp.chosen)];
    job.configs.push_back(chosen);
    job.fixed_slots.push_back(is_supervised(chosen.config.kind)
                                  ? supervised_decisions(chosen.config, *req.sweep, req.tune_contexts, false)
                                  : std::vector<int>{});
  }
  if (req.charge_call_costs) job.call_cost_us = deployed_call_costs(job.configs);
  return job;
}

void record_scores(const ReplayResults& scored, std::vector<TunedPolicy>& policies) {
  for (size_t g = 0; g < policies.size(); ++g) {
    policies[g].score_online = metrics_with_spread(scored, int(g), true);
    policies[g].score_final = metrics_with_spread(scored, int(g), false);
  }
}

std::vector<TunedPolicy> tune_and_score(const TuneRequest& req) {
  const auto run = [&](const ReplayJob& job) {
    return req.engine ? req.engine(job) : run_replay(job, backend_for_job(req.backend, job, command_err()));
  };
  std::vector<TunedPolicy> policies = expand_tune_grids(req.grids);
  const ReplayJob tune_job = make_tune_job(req, policies);
  choose_tuned_points(run(tune_job), req.objective, policies);
  record_scores(run(make_score_job(req, policies)), policies);
  return policies;
}

}  // namespace ncclbot
