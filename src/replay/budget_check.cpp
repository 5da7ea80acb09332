#include "ncclbot/replay/budget_check.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/policy/auto_policy.hpp"
#include "ncclbot/replay/policy_for_view.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {
namespace {

// Follows one replay's cumulative mean cost against the budget.
struct BudgetObserver {
  const double* mean = nullptr;  // the context's priced means, by index
  double budget_per_call = 0.0;  // (1 + alpha) * mu(b)
  double spent = 0.0;
  int64_t first_break = 0;  // 1-based call, 0: none

  void operator()(int t, int slot, float) {
    spent += mean[slot];
    if (first_break == 0 && spent > budget_per_call * double(t + 1)) first_break = t + 1;
  }
};

double largest_relative_deviation(const SweepView& v, const std::vector<int>& contexts) {
  // Drawn afresh, a latency is the truth times a log-normal factor: no bound at all.
  if (v.fresh) return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (int c : contexts) {
    const ValidArms valid = v.valid_arms(c);
    for (int s = 0; s < v.arms; ++s) {
      if (!valid.has(s)) continue;
      const double mu = v.mean(c, s);
      for (int r = 0; r < v.samples; ++r) {
        const double x = v.time_us[(int64_t(c) * v.arms + s) * v.samples + r];
        worst = std::max(worst, std::fabs(x - mu) / mu);
      }
    }
  }
  return worst;
}

}  // namespace

BudgetCheck check_budget(const ReplayJob& job, double alpha) {
  check_replay_job(job);
  if (!(alpha >= 0.0) || !std::isfinite(alpha)) throw UsageError("replay: --budget must be a number >= 0");
  const int n_cfg = int(job.configs.size()), n_ctx = int(job.contexts.size()), n_seed = job.seeds;
  const std::vector<uint64_t> stream_ids = job_stream_ids(job);
  // first_break[config][seed][context]
  std::vector<int64_t> first_break(size_t(n_cfg) * n_seed * n_ctx, 0);
  parallel_for(size_t(n_cfg) * n_ctx, job.threads, [&](size_t k) {
    const size_t cfg = k / size_t(n_ctx), i = k % size_t(n_ctx);
    ReplayTask task = replay_task_of(job, cfg, i, stream_ids[i]);
    const SweepView& v = task.sweep;
    visit_spec_policy_for(v, job.configs[cfg], [&](auto policy) {
      constexpr int kArms = kPolicyArms<decltype(policy)>;
      AutoPolicyT<kArms> nccl;
      nccl.reset(sweep_policy_context<kArms>(v, task.context, -1));
      for (int s = 0; s < n_seed; ++s) {
        task.seed = job.seed_base + uint64_t(s);
        BudgetObserver watch{v.mean_us + int64_t(task.context) * v.arms,
                             (1.0 + alpha) * v.mean(task.context, nccl.pick)};
        auto p = policy;
        replay_one(p, task, std::ref(watch));
        first_break[(cfg * size_t(n_seed) + size_t(s)) * size_t(n_ctx) + i] = watch.first_break;
      }
      return 0;
    });
  });
  BudgetCheck out;
  out.replays_per_config = int64_t(n_seed) * n_ctx;
  for (int cfg = 0; cfg < n_cfg; ++cfg) {
    int64_t replays = 0, seeds = 0, first = 0;
    for (int s = 0; s < n_seed; ++s) {
      bool any = false;
      for (int i = 0; i < n_ctx; ++i) {
        const int64_t b = first_break[(size_t(cfg) * n_seed + size_t(s)) * n_ctx + i];
        if (b == 0) continue;
        ++replays;
        any = true;
        first = first == 0 ? b : std::min(first, b);
      }
      seeds += any ? 1 : 0;
    }
    out.replays_broken.push_back(replays);
    out.seeds_broken.push_back(seeds);
    out.first_break_call.push_back(first);
  }
  out.largest_relative_deviation = largest_relative_deviation(job.sweep->arm_view(), job.contexts);
  return out;
}

}  // namespace ncclbot
