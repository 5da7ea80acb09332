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
  if (horizons.empty()) throw UsageError("horizon curve: no horizon");
  for (size_t h = 0; h < horizons.size(); ++h)
    if (horizons[h] < 1 || (h > 0 && horizons[h] <= horizons[h - 1]))
      throw UsageError("horizon curve: horizons must be >= 1 and increasing");
  ReplayJob longest = job;  // every replay runs to the longest horizon
  longest.horizon = horizons.back();
  check_replay_job(longest);
  const size_t n_ctx = job.contexts.size(), n_h = horizons.size();
  HorizonCurve out;
  out.horizons = horizons;
  out.online.assign(job.configs.size(), std::vector<std::vector<double>>(n_h, std::vector<double>(n_ctx)));
  parallel_for(job.configs.size() * n_ctx, job.threads, [&](size_t item) {
    const size_t cfg = item / n_ctx, i = item % n_ctx;
    ReplayTask task = replay_task_of(longest, cfg, i, context_stream_id(job.sweep->context(job.contexts[i])));
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
