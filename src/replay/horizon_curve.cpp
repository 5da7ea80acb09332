#include "ncclbot/replay/horizon_curve.hpp"

#include <algorithm>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/communicators.hpp"
#include "ncclbot/replay/policy_for_view.hpp"
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
  const size_t n_ctx = job.contexts.size(), n_h = horizons.size(), n_seed = size_t(job.seeds);
  const size_t replays = job.configs.size() * n_seed * n_ctx;
  const std::vector<uint64_t> stream_ids = job_stream_ids(job);
  const Communicators comms = first_use_communicators(*job.sweep, job.contexts);
  const bool coupled = comms.count() > 0;
  // online[h][config][seed][i]: each replay's online loss at horizons[h], the engines' layout per
  // horizon, so the first-use charges at h are the engines' own at that horizon.
  std::vector<std::vector<double>> online(n_h, std::vector<double>(replays));
  std::vector<uint32_t> first_use(coupled ? replays * kNumAlgos : 0);
  parallel_for(job.configs.size() * n_ctx, job.threads, [&](size_t item) {
    const size_t cfg = item / n_ctx, i = item % n_ctx;
    ReplayTask task = replay_task_of(longest, cfg, i, stream_ids[i]);
    std::vector<double> sums(n_h, 0.0);
    for (size_t s = 0; s < n_seed; ++s) {
      task.seed = job.seed_base + uint64_t(s);
      PrefixLosses prefix{&horizons, sums.data()};
      const ReplayOutcome o = visit_spec_policy_for(
          task.sweep, job.configs[cfg], [&](auto policy) { return replay_one(policy, task, prefix); });
      const size_t at = (cfg * n_seed + s) * n_ctx + i;
      for (size_t h = 0; h < n_h; ++h) online[h][at] = sums[h] / double(horizons[h]);
      if (coupled) std::copy_n(o.first_use, kNumAlgos, first_use.begin() + long(at * kNumAlgos));
    }
  });
  if (coupled)  // each horizon's charges on that horizon's losses, as an engine charges a replay of it
    for (size_t h = 0; h < n_h; ++h)
      charge_first_uses(job, comms, stream_ids, first_use.data(), online[h].data(), job.configs.size(),
                        horizons[h]);
  HorizonCurve out;
  out.horizons = horizons;
  out.online.assign(job.configs.size(), std::vector<std::vector<double>>(n_h, std::vector<double>(n_ctx)));
  for (size_t cfg = 0; cfg < job.configs.size(); ++cfg)
    for (size_t h = 0; h < n_h; ++h)
      for (size_t i = 0; i < n_ctx; ++i) {
        double sum = 0.0;  // seed order, as the engines' mean
        for (size_t s = 0; s < n_seed; ++s) sum += online[h][(cfg * n_seed + s) * n_ctx + i];
        out.online[cfg][h][i] = sum / double(n_seed);
      }
  return out;
}

}  // namespace ncclbot
