#include "ncclbot/replay/horizon_curve.hpp"

#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/parallel_for.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {
namespace {

// Sums each call's loss as the cursor does and keeps the sum at every horizon.
struct PrefixLosses {
  const std::vector<int>* horizons;
  double* sums;  // one per horizon
  size_t next = 0;
  double sum = 0.0;
  void operator()(int, int, float) const {}
  void loss(int t, double call_loss) {
    sum += call_loss;
    if (next < horizons->size() && t + 1 == (*horizons)[next]) sums[next++] = sum;
  }
};

}  // namespace

HorizonCurve replay_horizon_curve(const ReplayJob& job, const std::vector<int>& horizons) {
  if (!job.sweep) throw UsageError("horizon curve: no sweep");
  if (horizons.empty()) throw UsageError("horizon curve: no horizon");
  for (size_t h = 0; h < horizons.size(); ++h)
    if (horizons[h] < 1 || (h > 0 && horizons[h] <= horizons[h - 1]))
      throw UsageError("horizon curve: horizons must be >= 1 and increasing");
  if (!feedback_schedule_fits(job.delay, job.window))
    throw UsageError("horizon curve: delay " + std::to_string(job.delay) + " and window " +
                     std::to_string(job.window) + " do not fit the replay");
  if (job.seeds < 1) throw UsageError("horizon curve: seeds must be >= 1");
  const SweepView view = job.sweep->view();
  const size_t n_ctx = job.contexts.size(), n_h = horizons.size();
  HorizonCurve out;
  out.horizons = horizons;
  out.online.assign(job.configs.size(), std::vector<std::vector<double>>(n_h, std::vector<double>(n_ctx)));
  parallel_for(job.configs.size() * n_ctx, job.threads, [&](size_t item) {
    const size_t cfg = item / n_ctx, i = item % n_ctx;
    ReplayTask task;
    task.sweep = view;
    task.context = job.contexts[i];
    task.stream_id = context_stream_id(job.sweep->context(task.context));
    task.horizon = horizons.back();
    task.delay = job.delay;
    task.window = job.window;
    task.policy_start = job.policy_start;
    task.call_cost_us = job.call_cost_us.empty() ? 0.0 : job.call_cost_us[cfg];
    if (cfg < job.fixed_slots.size() && !job.fixed_slots[cfg].empty())
      task.fixed_slot = job.fixed_slots[cfg][size_t(task.context)];
    std::vector<double> online_sum(n_h, 0.0), sums(n_h, 0.0);
    for (int s = 0; s < job.seeds; ++s) {
      task.seed = job.seed_base + uint64_t(s);
      PrefixLosses prefix{&horizons, sums.data()};
      visit_policy(job.configs[cfg].config, [&](auto policy) { return replay_one(policy, task, prefix); });
      for (size_t h = 0; h < n_h; ++h) online_sum[h] += sums[h] / double(horizons[h]);
    }
    for (size_t h = 0; h < n_h; ++h) out.online[cfg][h][i] = online_sum[h] / double(job.seeds);
  });
  return out;
}

}  // namespace ncclbot
