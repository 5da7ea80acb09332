#pragma once
// Tune and score (`ncclbot tune`, and the study runner): every grid point of every policy is
// replayed on the tune contexts, the best point by the objective (over the online loss: what a
// job pays) is frozen, and the frozen config is replayed on the score contexts. Supervised
// configs are scored on the tune contexts leave-one-out (an honest estimate, not their training
// fit) and fit once on all tune contexts for the score contexts.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/deployed/observation_cost.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot {

enum class TuneObjective { kMean, kP99, kAbove10pct };
TuneObjective parse_tune_objective(const std::string& text);  // mean | p99 | above_10pct
std::string_view tune_objective_name(TuneObjective objective);
double objective_value(const LossSummary& s, TuneObjective objective);

// The grid point to freeze, from each point's loss summary on the tune contexts: the smallest
// objective; among equal objectives the smallest mean loss; among equal both, the first point in
// grid order. `tune` and the study runner (`run`) both decide with this one function.
int choose_grid_point(std::span<const LossSummary> points, TuneObjective objective);

// A metric's spread across seeds: the metric computed per seed over the contexts.
struct SeedSpread {
  double mean = 0, sd = 0, min = 0, max = 0;  // sd with n - 1 (0 for one seed)
};
struct MetricsWithSpread {
  LossSummary summary;  // over contexts of the seed-averaged loss (what `replay` reports)
  SeedSpread mean, p99, max, above_10pct;
};
MetricsWithSpread metrics_with_spread(const ReplayResults& r, int config, bool online);

struct TuneRequest {
  const Sweep* sweep = nullptr;
  std::vector<std::string> grids;  // one policy spec (grid) per policy
  std::vector<int> tune_contexts, score_contexts;
  TuneObjective objective = TuneObjective::kMean;
  int seeds = 1;
  uint64_t seed_base = 0;
  int horizon = 1;
  int delay = 0;         // feedback delay D (replay/replay.hpp)
  int window = 1;        // decision window W (replay/replay.hpp)
  int policy_start = 0;  // calls of NCCL's own pick first (replay/replay.hpp)
  // Every config pays the plugin's measured per-call cost (deployed/deployed_cost.hpp).
  bool charge_call_costs = false;
  // What watching a call costs as deployed (deployed/observation_cost.hpp); nullopt charges nothing.
  std::optional<ObservationCharge> observation;
  ReplayProgress* progress = nullptr;  // told of every finished unit of both jobs, if set
  int threads = 1;
  ReplayBackend backend = ReplayBackend::kCpu;  // already resolved: kCpu or kCuda (backend.hpp)
  // Runs the two replay jobs (tune, then score) instead of run_replay(job, backend) when set:
  // scale-out runs them across processes (docs/scale-out.md). Must return the same results.
  std::function<ReplayResults(const ReplayJob&)> engine;
};

struct TunedPolicy {
  std::string grid;
  std::vector<PolicySpec> points;
  std::vector<double> objective;  // per point, on the tune contexts
  int chosen = 0;
  MetricsWithSpread tune_online, tune_final, score_online, score_final;
};

std::vector<TunedPolicy> tune_and_score(const TuneRequest& request);

// tune_and_score() one step at a time, for runs whose phases happen in different processes
// (`tune --phase tune|score --shard I/N`, docs/scale-out.md). tune_and_score() is exactly:
//   policies = expand_tune_grids(grids); tuned = run(make_tune_job(req, policies));
//   choose_tuned_points(tuned, objective, policies); scored = run(make_score_job(req, policies));
//   record_scores(scored, policies).
// Every grid with its points (grid, points); needs no sweep.
std::vector<TunedPolicy> expand_tune_grids(const std::vector<std::string>& grids);
// Every point of every policy on the tune contexts, per-seed losses kept (configs in policy, then
// point order). Checks the request as tune_and_score() does.
ReplayJob make_tune_job(const TuneRequest& request, const std::vector<TunedPolicy>& policies);
// From the tune job's results: each point's objective, the chosen point (choose_grid_point), and
// the chosen point's tune metrics.
void choose_tuned_points(const ReplayResults& tuned, TuneObjective objective,
                         std::vector<TunedPolicy>& policies);
// Each policy's chosen point on the score contexts (supervised ones fit on all tune contexts).
ReplayJob make_score_job(const TuneRequest& request, const std::vector<TunedPolicy>& policies);
// The score job's results -> each policy's score metrics.
void record_scores(const ReplayResults& scored, std::vector<TunedPolicy>& policies);

}  // namespace ncclbot
