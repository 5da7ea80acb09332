#pragma once
// One counterfactual replay (DESIGN.md "Losses"): a policy plays horizon T steps on context c of
// a forced-arm sweep. At step t it selects arm a_t, observes one of a_t's R measured samples,
//   r_t = uniform_below(w_t, R),  w_t = word t of the Philox stream (seed, id) = the t-th curand()
//   output after curand_init(seed, id, 0), i.e. block (t/4, 0, id), word t mod 4 (core/philox.hpp),
// and pays the relative loss l(c, a_t) = mu[c][a_t] / mu*[c] - 1 (replay/loss.hpp).
//   online loss = (sum over t of l(c, a_t)) / T   (what a job pays, exploration included; summed in
//                 step order in double)
//   final loss  = l(c, commit)                     (the arm the policy would settle on at T; its
//                 StepRandom is step T's)
// The policy's own draws use lanes >= 1 of the same (seed, id) stream (StepRandom), so they never
// overlap the sample draws. Nothing here allocates, throws or depends on the caller's threading.
#include <cstdint>

#include "ncclbot/core/philox.hpp"
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/policy/policy_context.hpp"
#include "ncclbot/replay/loss.hpp"

namespace ncclbot {

struct ReplayTask {
  SweepView sweep;
  int context = 0;         // index into the sweep
  uint64_t seed = 0;       // Philox key
  uint64_t stream_id = 0;  // Philox subsequence (replay/stream_id.hpp)
  int horizon = 0;         // T >= 1
  int fixed_slot = -1;     // a frozen decision for supervised selectors, else -1
};

struct ReplayOutcome {
  double online_loss = 0.0;
  double final_loss = 0.0;
  int final_slot = -1;
};

// Relative losses of every slot of context c (0 for invalid slots, which are never played);
// bit-identical to relative_loss() of replay/loss.hpp.
NCCLBOT_HD inline void context_losses(const SweepView& v, int c, double* loss) {
  const int best = best_slot(v, c);
  const ArmMask mask = v.mask(c);
  for (int s = 0; s < kNumArms; ++s) loss[s] = mask.has(s) ? v.mean(c, s) / v.mean(c, best) - 1.0 : 0.0;
}

// The PolicyContext of a sweep context: its mask, the sweep's prior, the measured means.
NCCLBOT_HD inline PolicyContext sweep_policy_context(const SweepView& v, int c, int fixed_slot) {
  PolicyContext ctx;
  ctx.mask = v.mask(c);
  ctx.prior_us = v.has_prior() ? v.prior_us + int64_t(c) * kNumArms : nullptr;
  ctx.true_mean_us = v.mean_us + int64_t(c) * kNumArms;
  ctx.fixed_slot = fixed_slot;
  return ctx;
}

struct NoStepObserver {
  NCCLBOT_HD void operator()(int /*step*/, int /*slot*/, float /*latency_us*/) const {}
};

// One replay in progress: what step t needs besides the policy (the context's losses, the
// sample-draw Philox block, the running loss sum). replay_one() drives one of these; the CPU engine
// drives several side by side (replay_batch.hpp), which changes no bit of any of them.
struct ReplayCursor {
  const float* times = nullptr;  // the context's samples, [slot][sample]
  int samples = 0;
  uint32_t seed_lo = 0, seed_hi = 0, id_lo = 0, id_hi = 0;
  Philox4x32 block{};
  double loss_sum = 0.0;
  double loss[kNumArms];

  template <typename Policy>
  NCCLBOT_HD void begin(Policy& policy, const ReplayTask& task) {
    const SweepView& v = task.sweep;
    context_losses(v, task.context, loss);
    policy.reset(sweep_policy_context(v, task.context, task.fixed_slot));
    seed_lo = uint32_t(task.seed);
    seed_hi = uint32_t(task.seed >> 32);
    id_lo = uint32_t(task.stream_id);
    id_hi = uint32_t(task.stream_id >> 32);
    samples = v.samples;
    times = v.time_us + int64_t(task.context) * kNumArms * v.samples;
    block = Philox4x32{};
    loss_sum = 0.0;
  }

  template <typename Policy, typename Observer>
  NCCLBOT_HD void step(Policy& policy, const ReplayTask& task, int t, Observer& observe) {
    StepRandom rng(task.seed, task.stream_id, uint32_t(t));
    const int slot = policy.select(rng);
    if ((t & 3) == 0)
      block = philox4x32_10(Philox4x32{{uint32_t(t) >> 2, 0u, id_lo, id_hi}}, seed_lo, seed_hi);
    const uint32_t r = uniform_below(block.v[t & 3], uint32_t(samples));
    const float x = times[slot * samples + int(r)];
    observe(t, slot, x);
    policy.update(slot, double(x));
    loss_sum += loss[slot];
  }

  template <typename Policy>
  NCCLBOT_HD ReplayOutcome finish(Policy& policy, const ReplayTask& task) const {
    StepRandom final_rng(task.seed, task.stream_id, uint32_t(task.horizon));
    ReplayOutcome out;
    out.online_loss = task.horizon > 0 ? loss_sum / double(task.horizon) : 0.0;
    out.final_slot = policy.commit(final_rng);
    out.final_loss = out.final_slot >= 0 ? loss[out.final_slot] : 0.0;
    return out;
  }
};

// Runs one replay; `policy` is any policy type of policy/ with its params set. `observe(t, slot,
// latency)` sees every step (tests record traces with it; the engines pass NoStepObserver).
template <typename Policy, typename Observer = NoStepObserver>
NCCLBOT_HD ReplayOutcome replay_one(Policy& policy, const ReplayTask& task, Observer observe = Observer{}) {
  ReplayCursor cursor;
  cursor.begin(policy, task);
  for (int t = 0; t < task.horizon; ++t) cursor.step(policy, task, t, observe);
  return cursor.finish(policy, task);
}

}  // namespace ncclbot
