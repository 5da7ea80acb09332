#pragma once
// One counterfactual replay (docs/architecture.md "Losses"): a policy plays horizon T steps on context c of
// a forced-arm sweep. At step t it selects arm a_t, observes one of a_t's R measured samples,
//   r_t = uniform_below(w_t, R),  w_t = word t of the Philox stream (seed, id) = the t-th curand()
//   output after curand_init(seed, id, 0), i.e. block (t/4, 0, id), word t mod 4 (core/philox.hpp),
// and pays the relative loss l(c, a_t) = mu[c][a_t] / mu*[c] - 1 (replay/loss.hpp).
//   online loss = (sum over t of l(c, a_t)) / T   (what a job pays, exploration included; summed in
//                 step order in double)
//   final loss  = l(c, commit)                     (the arm the policy would settle on at T; its
//                 StepRandom is step T's)
// On a sweep that draws afresh (SweepView::fresh, core/observation_noise.hpp) the latency is instead
// drawn around the arm's truth mu[c][a_t] from block (t, kFreshObservationLane, id), and no sample
// word is used. The policy's own draws use lanes >= 1 of the same (seed, id) stream (StepRandom), so
// they never overlap the sample draws. Nothing here allocates, throws or depends on the caller's threading.
//
// Delayed feedback (ReplayTask::delay = D and window = W, as a tuner plugin sees it: a call's
// latency is measured after later calls were already decided). Call t is decided with the latencies
// of calls u < A(t) = max(0, floor(t / W) * W - D) and nothing newer:
//   - W = 1 is a plain delay: the latency of call u reaches the policy just before call u + D + 1
//     selects, and nothing changes its state in between. D = 0 is update-then-select.
//   - W > 1 is the plugin's leader protocol (docs/plugin.md "Decision windows"): the decisions of
//     calls [kW, (k+1)W) are made together, from the state that holds the latencies of the calls
//     before kW - D (D: how many calls before the window its request goes out).
// A policy start S > 0 (ReplayTask::policy_start, the plugin's leader mode: kLeaderStart) plays
// NCCL's own pick (AUTO's arm) on calls [0, S), while the ranks' cost tables gather; the policy
// decides from call S on, its draws at step t - S, and sees the latencies of the first S calls as
// of any other (on the same schedule). Those calls are not its decisions, so never pending.
// The decisions in [A(t), t) are pending: a policy with select_pending() counts them
// (policy_context.hpp, PendingPulls); the others decide as undelayed. The final (committed) arm is
// taken with the latencies of calls before A(T). The delayed path keeps the calls in [A(t), t)
// with their slots and observed latencies, so a late call reports exactly the value it observed.
//
// Call dynamics (a sweep's warm-up, level shifts and first-use cost, core/call_dynamics.hpp) act on
// top of the drawn sample: the policy observes the sample times the call's level and warm-up
// factors; the loss counts what the call costs against the best arm at that call's levels, plus
// the arm's warm-up. The final loss is the committed arm's at the last levels. An algorithm's first
// use is paid once per communicator, not per context: the replay records the call of each
// algorithm's first use (ReplayOutcome::first_use), and the engines charge the communicator's
// further algorithms from those of all its contexts (replay/first_use.hpp).
//
// A policy's own per-call cost (ReplayTask::call_cost_us: the plugin's getCollInfo time as
// deployed, docs/replay.md "Scoring as deployed") is paid on every call, relative to the best arm
// at that call's levels: l_t = (mu[a_t] + cost) / mu*_t - 1. It enters the online loss only; the
// final loss is the committed arm's. A cost of 0 adds exactly nothing, bit for bit.
//
// Watching (docs/replay.md "The cost of watching"): a call whose latency the policy observes is
// watched, and as deployed a watched call costs the fraction ReplayTask::observation_cost of its own
// latency more (deployed/observation_cost.hpp): l_t += f * (l_t + 1) before the per-call cost. With
// a watch rule (ReplayTask::watch, policy/watch_rule.hpp) a call is watched or not before it runs;
// an unwatched call's latency never reaches the policy (its decision is settled when the latency
// would have arrived) and it pays no observation cost. ReplayOutcome::observed counts the watched
// calls. With f = 0 and no rule every call is watched and nothing changes, bit for bit.
#include <cstdint>
#include <type_traits>

#include "ncclbot/core/call_dynamics.hpp"
#include "ncclbot/core/philox.hpp"
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/policy/auto_policy.hpp"
#include "ncclbot/policy/policy_context.hpp"
#include "ncclbot/policy/watch_rule.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/loss.hpp"

namespace ncclbot {

// The most calls a replay may hold pending (W - 1 + D <= kMaxReplayDelay).
inline constexpr int kMaxReplayDelay = 1024;
// The tuner plugin stops counting decisions as pending once this many were made without any latency
// coming back (a job whose latencies never arrive: deciding as undelayed keeps to the learned, or
// prior, best arm instead of hallucinating pulls forever), and counts again when one arrives. More
// than any replay ever decides between two arrivals (at most W - 1 + D + 1 <= kMaxReplayDelay + 1,
// at the start), so replays never reach it.
inline constexpr uint64_t kPendingWithoutFeedback = uint64_t(kMaxReplayDelay) + 1;

struct ReplayTask {
  SweepView sweep;
  int context = 0;                // index into the sweep
  uint64_t seed = 0;              // Philox key
  uint64_t stream_id = 0;         // Philox subsequence (replay/stream_id.hpp)
  int horizon = 0;                // T >= 1
  int fixed_slot = -1;            // a frozen decision for supervised selectors, else -1
  int delay = 0;                  // D >= 0: calls decided before a latency arrives (above)
  int window = 1;                 // W >= 1: calls decided together (above); W - 1 + D <= kMaxReplayDelay
  int policy_start = 0;           // S >= 0: calls before it play NCCL's own pick (above)
  double call_cost_us = 0.0;      // the policy's own cost per call (>= 0), paid on every call
  double observation_cost = 0.0;  // f >= 0: what watching a call adds, relative to its latency (above)
  WatchRule watch{};              // which calls are watched (above); by default every one
  bool slots_only = false;        // the policy sees only the arms at NCCL's own knobs (PolicySpec)
  SelectAids aids;                // engine-side caches the policy may read (CPU engine only), none by default
};

// What first_use[] holds for an algorithm the replay never played (or for every algorithm of a
// sweep without call dynamics).
inline constexpr uint32_t kNeverUsed = 0xffffffffu;

struct ReplayOutcome {
  double online_loss = 0.0;  // without the communicator's first-use charges (replay/first_use.hpp)
  double final_loss = 0.0;
  int final_slot = -1;
  uint32_t observed = 0;          // the calls watched (above)
  uint32_t first_use[kNumAlgos];  // the call of each algorithm's first use, or kNeverUsed
};

// The arm capacity N of a policy type P<N> (every registered policy is a class template over it,
// policy_context.hpp): which cursor and context its replays take. A policy type that is no such
// template (a test's own) takes PolicyContext, whose capacity is kNumArms.
template <typename Policy>
constexpr int policy_arms_of(const Policy*) {
  if constexpr (requires { Policy::kArms; })
    return Policy::kArms;  // a wrapper of a policy (policy/conservative.hpp) says its own
  else
    return kNumArms;
}
template <template <int> class P, int N>
constexpr int policy_arms_of(const P<N>*) {
  return N;
}
template <typename Policy>
inline constexpr int kPolicyArms = policy_arms_of(static_cast<const Policy*>(nullptr));

// The most arms per context the engines replay a knob sweep with (the policies' capacity there; a
// slot sweep's is kNumArms): a sweep with more is refused, naming this limit.
inline constexpr int kKnobReplayArms = 512;

// Whether a policy with room for N arms can replay `v`: a slot-shaped view needs N = kNumArms
// exactly (its indices are NCCL's slots), a knob view at most N arms per context.
NCCLBOT_HD inline bool view_fits_arms(const SweepView& v, int n) {
  return v.slot_shaped() ? n == kNumArms : v.arms <= n;
}

// Relative losses of every index of context c, loss[0..N) (0 for invalid indices, which are never
// played); bit-identical to relative_loss() of replay/loss.hpp.
template <int N>
NCCLBOT_HD void context_losses(const SweepView& v, int c, double* loss) {
  const int best = best_slot(v, c);
  const ValidArms valid = v.valid_arms(c);
  for (int s = 0; s < N; ++s)
    loss[s] = s < v.arms && valid.has(s) ? v.mean(c, s) / v.mean(c, best) - 1.0 : 0.0;
}

// The PolicyContext of a sweep context: its valid arms (with `slots_only`, those at NCCL's own
// channels and chunk size), the sweep's prior, the measured means, and in a knob sweep which arm
// each index is.
template <int N = kNumArms>
NCCLBOT_HD PolicyContextT<N> sweep_policy_context(const SweepView& v, int c, int fixed_slot,
                                                  bool slots_only = false) {
  PolicyContextT<N> ctx;
  ctx.mask = v.mask_of<N>(c);
  if (slots_only && v.arm_table)
    for (int s = 0; s < v.arms; ++s)
      if (ctx.mask.has(s) && !v.arm(c, s).default_knobs()) ctx.mask.clear(s);
  ctx.prior_us = v.has_prior() ? v.prior_us + int64_t(c) * v.arms : nullptr;
  ctx.true_mean_us = v.mean_us + int64_t(c) * v.arms;
  ctx.fixed_slot = fixed_slot;
  ctx.arms = v.arm_table ? v.arm_table + int64_t(c) * v.arms : nullptr;
  return ctx;
}

struct NoStepObserver {
  NCCLBOT_HD void operator()(int /*step*/, int /*slot*/, float /*latency_us*/) const {}
};

// After the n-th change point (n >= 1): every valid arm's level (written to level[s] when `level` is
// given) and the cheapest mean x level, what the best choice costs then, over indices [0, arms). One
// definition for the replay cursor and for the first-use charge (replay/first_use.hpp), so both see
// the same bits. An arm's level is drawn by its index: a knob sweep's arms each get their own.
template <typename Mask>
NCCLBOT_HD double shifted_best_cost(const CallDynamics& d, const double* means, const Mask& mask, int arms,
                                    uint64_t seed, uint64_t id, uint32_t n, double* level) {
  double ref = 0.0;
  const double shared = shared_level(d, seed, id, n);
  for (int s = 0; s < arms; ++s) {
    if (!mask.has(s)) continue;
    const double l = shifted_level(d, seed, id, n, s, shared);
    if (level) level[s] = l;
    const double cost = means[s] * l;
    if (ref == 0.0 || cost < ref) ref = cost;
  }
  return ref;
}

// One replay in progress: what step t needs besides the policy (the context's losses, the
// sample-draw Philox block, the running loss sum). replay_one() drives one of these; the CPU engine
// drives several side by side (replay_batch.hpp), which changes no bit of any of them.
// DelayCapacity > 0 adds the ring of calls whose latency has not yet reached the policy (tasks with
// window - 1 + delay <= DelayCapacity); 0 is the undelayed cursor, which has no ring at all.
// A sweep with call dynamics (SweepView::dynamic(), core/call_dynamics.hpp) takes the dynamic path:
// levels, warm-up and first-use costs on top of the drawn sample; without them a step is exactly
// the plain draw-observe-pay of docs/architecture.md "Losses".
// N is the policy's arm capacity (kPolicyArms).
template <int DelayCapacity, int N = kNumArms>
struct ReplayCursorT {
  const float* times = nullptr;  // the context's samples, [slot][sample]
  int samples = 0;
  const ObservationNoise* fresh = nullptr;  // drawing afresh (SweepView::fresh): the context's noise
  const double* means = nullptr;            // the context's priced means (the truth a fresh draw is around)
  uint32_t seed_lo = 0, seed_hi = 0, id_lo = 0, id_hi = 0;
  Philox4x32 block{};
  double loss_sum = 0.0;
  double loss[N];
  double cost_loss = 0.0;  // call_cost_us relative to the best arm now: added to every call's loss
  // Delayed feedback only: a ring of the calls whose latency has not reached the policy yet,
  // oldest at pending_head: pending[i] the slot, pending_x[i] the latency it observed (what reaches
  // the policy when it arrives); in_flight counts them by slot.
  static constexpr int kRing = DelayCapacity > 0 ? DelayCapacity + 1 : 1;
  ArmIndexT<N> pending[kRing];
  float pending_x[kRing];
  int pending_head = 0, pending_count = 0;
  struct NoPulls {};  // the undelayed cursor keeps none (it lives in the kernels' shared memory)
  std::conditional_t<(DelayCapacity > 0), PendingPullsT<N>, NoPulls> in_flight;
  int nccl_pick = -1;  // with a policy start: AUTO's arm, played before it
  // Call dynamics only.
  bool dynamic = false;
  CallDynamics dyn{};
  const Arm* arm_of = nullptr;  // a knob sweep's arms by index (the algorithm a first use names)
  int arms = 0;                 // the context's arm indices
  double level[N];              // each arm's current level (1 before the first change point)
  double ref_us = 0.0;          // min over arms of mean * level: what the best choice costs now
  uint32_t next_shift = 0xffffffffu, shifts = 0;
  uint32_t first_use[kNumAlgos];  // the call of each algorithm's first use, or kNeverUsed
  ArmMaskT<N> mask{};
  uint16_t plays[N];
  // Watching, with a watch rule only (without one every call is watched): the calls watched so far
  // and each arm's watched calls (saturating).
  bool watch_rule = false;
  uint32_t observed = 0;
  uint16_t seen[N];
  // What the delayed ring holds for a call that was not watched: no latency (samples are > 0).
  static constexpr float kUnwatched = -1.0f;

  NCCLBOT_HD uint32_t sample_word(uint32_t t, Philox4x32& cache) const {
    if ((t & 3) == 0) cache = philox4x32_10(Philox4x32{{t >> 2, 0u, id_lo, id_hi}}, seed_lo, seed_hi);
    return cache.v[t & 3];
  }

  template <typename Policy>
  NCCLBOT_HD void begin(Policy& policy, const ReplayTask& task) {
    const SweepView& v = task.sweep;
    context_losses<N>(v, task.context, loss);
    policy.reset(sweep_policy_context<N>(v, task.context, task.fixed_slot, task.slots_only));
    seed_lo = uint32_t(task.seed);
    seed_hi = uint32_t(task.seed >> 32);
    id_lo = uint32_t(task.stream_id);
    id_hi = uint32_t(task.stream_id >> 32);
    samples = v.samples;
    times = v.time_us + int64_t(task.context) * v.arms * v.samples;
    fresh = v.fresh ? v.fresh + task.context : nullptr;
    means = v.mean_us + int64_t(task.context) * v.arms;
    block = Philox4x32{};
    for (int a = 0; a < kNumAlgos; ++a) first_use[a] = kNeverUsed;
    pending_head = 0;
    pending_count = 0;
    if constexpr (DelayCapacity > 0) {
      for (int s = 0; s < N; ++s) in_flight.count[s] = 0;
      in_flight.total = 0;
      if (task.policy_start > 0) {
        AutoPolicyT<N> nccl;
        nccl.reset(sweep_policy_context<N>(v, task.context, -1));
        nccl_pick = nccl.pick;
      }
    }
    loss_sum = 0.0;
    observed = 0;
    watch_rule = !watches_every_call(task.watch);
    if (watch_rule)
      for (int s = 0; s < N; ++s) seen[s] = 0;
    cost_loss = task.call_cost_us / v.mean(task.context, best_slot(v, task.context));
    dynamic = v.dynamic();
    if (dynamic) {
      dyn = v.dynamics;
      arm_of = v.arm_table ? v.arm_table + int64_t(task.context) * v.arms : nullptr;
      arms = v.arms;
      mask = v.mask_of<N>(task.context);
      ref_us = means[best_slot(v, task.context)];
      shifts = 0;
      next_shift = dyn.shifts() ? shift_gap(dyn, task.seed, task.stream_id, 0) : 0xffffffffu;
      for (int s = 0; s < N; ++s) {
        level[s] = 1.0;
        plays[s] = 0;
      }
    }
  }

  // A change point: every arm gets a new level, and the losses follow the new best.
  NCCLBOT_HD void shift_levels(const ReplayTask& task) {
    ++shifts;
    ref_us = shifted_best_cost(dyn, means, mask, arms, task.seed, task.stream_id, shifts, level);
    for (int s = 0; s < arms; ++s) loss[s] = mask.has(s) ? means[s] * level[s] / ref_us - 1.0 : 0.0;
    cost_loss = task.call_cost_us / ref_us;
    next_shift = next_change_point(dyn, task.seed, task.stream_id, shifts, next_shift);
  }

  // Delayed feedback: the latencies of the calls before A(t) (above) reach the policy, oldest first,
  // just before call t selects (or the final commit, t = T).
  NCCLBOT_HD static int feedback_end(const ReplayTask& task, int t) {
    return ncclbot::feedback_end<int>(t, task.window, task.delay);
  }
  template <typename Policy>
  NCCLBOT_HD void deliver_late(Policy& policy, const ReplayTask& task, int t) {
    const int end = feedback_end(task, t);
    while (t - pending_count < end) {
      const int slot = pending[pending_head];
      if (pending_x[pending_head] != kUnwatched) policy.update(slot, double(pending_x[pending_head]));
      if (t - pending_count >= task.policy_start) {  // a policy decision, not NCCL's before the start
        --in_flight.count[slot];
        --in_flight.total;
      }
      pending_head = pending_head + 1 == kRing ? 0 : pending_head + 1;
      --pending_count;
    }
  }

  // The observed latency of call t on `slot` from the drawn sample, and what the call costs
  // relative to the best choice now (the dynamic path's loss).
  NCCLBOT_HD float observe_dynamic(int t, int slot, float x, double& call_loss) {
    const uint32_t k = plays[slot];
    const double arm_warm = warm_factor(dyn.arm_warmup, dyn.arm_warmup_calls, k);
    const double factor =
        level[slot] * warm_factor(dyn.job_warmup, dyn.job_warmup_calls, uint32_t(t)) * arm_warm;
    call_loss = loss[slot];
    if (arm_warm != 1.0) call_loss += (arm_warm - 1.0) * means[slot] * level[slot] / ref_us;
    const int algo = arm_of ? int(arm_of[slot].algo) : slot / kNumProtos;
    if (first_use[algo] == kNeverUsed) first_use[algo] = uint32_t(t);
    if (k < 0xffffu) plays[slot] = uint16_t(k + 1);
    return float(double(x) * factor);
  }

  // Whether call t on `slot` is watched under the task's rule, counting it if so.
  NCCLBOT_HD bool watch_slot(const ReplayTask& task, int slot, int t) {
    const uint32_t n = seen[slot];
    if (!watch_call(task.watch, n, task.seed, task.stream_id, uint32_t(t))) return false;
    if (n < 0xffffu) seen[slot] = uint16_t(n + 1);
    ++observed;
    return true;
  }

  template <typename Policy, typename Observer>
  NCCLBOT_HD void step(Policy& policy, const ReplayTask& task, int t, Observer& observe) {
    if (dynamic && uint32_t(t) == next_shift) shift_levels(task);
    if constexpr (DelayCapacity > 0) deliver_late(policy, task, t);
    int slot;
    if constexpr (DelayCapacity > 0) {
      StepRandom rng(task.seed, task.stream_id, uint32_t(t - task.policy_start));
      slot = t < task.policy_start ? nccl_pick : select_pending_with(policy, rng, task.aids, in_flight);
    } else {
      StepRandom rng(task.seed, task.stream_id, uint32_t(t));
      slot = select_with(policy, rng, task.aids);
    }
    // The call's latency: one of the arm's stored samples, or drawn afresh around its truth.
    uint32_t r = 0;
    float x;
    if (fresh) {
      x = float(fresh_latency(*fresh, means[slot],
                              philox_block(task.seed, task.stream_id, uint32_t(t), kFreshObservationLane)));
    } else {
      r = uniform_below(sample_word(uint32_t(t), block), uint32_t(samples));
      x = times[slot * samples + int(r)];
    }
    double call_loss = loss[slot];
    if (dynamic) x = observe_dynamic(t, slot, x, call_loss);
    const bool watched = !watch_rule || watch_slot(task, slot, t);
    if (watched && task.observation_cost != 0.0) call_loss += task.observation_cost * (call_loss + 1.0);
    observe(t, slot, x);
    // An observer with loss() is told each call's loss as it enters the sum (horizon_curve.hpp).
    if constexpr (requires { observe.loss(t, 0.0); }) observe.loss(t, call_loss + cost_loss);
    if constexpr (DelayCapacity > 0) {
      int at = pending_head + pending_count;
      at = at >= kRing ? at - kRing : at;
      pending[at] = ArmIndexT<N>(slot);
      pending_x[at] = watched ? x : kUnwatched;
      ++pending_count;
      if (t >= task.policy_start) {
        ++in_flight.count[slot];
        ++in_flight.total;
      }
    } else if (!watched) {
      // Nothing reaches the policy.
    } else if constexpr (requires { policy.update_log(slot, 0.0); }) {
      // The observation is the drawn sample itself (no dynamics): its log may come precomputed.
      if (task.aids.sample_logs && !dynamic && !fresh)
        policy.update_log(slot, task.aids.sample_logs[slot * samples + int(r)]);
      else
        policy.update(slot, double(x));
    } else {
      policy.update(slot, double(x));
    }
    loss_sum += call_loss + cost_loss;
  }

  template <typename Policy>
  NCCLBOT_HD ReplayOutcome finish(Policy& policy, const ReplayTask& task) const {
    StepRandom final_rng(task.seed, task.stream_id, uint32_t(task.horizon - task.policy_start));
    ReplayOutcome out;
    out.online_loss = task.horizon > 0 ? loss_sum / double(task.horizon) : 0.0;
    out.final_slot = policy.commit(final_rng);
    out.final_loss = out.final_slot >= 0 ? loss[out.final_slot] : 0.0;
    out.observed = watch_rule ? observed : uint32_t(task.horizon);
    for (int a = 0; a < kNumAlgos; ++a) out.first_use[a] = first_use[a];
    return out;
  }
};

using ReplayCursor = ReplayCursorT<0>;
using DelayedReplayCursor = ReplayCursorT<kMaxReplayDelay>;

// One replay in a cursor the caller provides (the CUDA kernels keep it in shared memory); begin()
// sets every field the replay reads, so the cursor's earlier contents do not matter.
template <typename Cursor, typename Policy, typename Observer>
NCCLBOT_HD ReplayOutcome replay_in_cursor(Cursor& cursor, Policy& policy, const ReplayTask& task,
                                          Observer& observe) {
  cursor.begin(policy, task);
  for (int t = 0; t < task.horizon; ++t) cursor.step(policy, task, t, observe);
  if constexpr (Cursor::kRing > 1) cursor.deliver_late(policy, task, task.horizon);
  return cursor.finish(policy, task);
}

template <typename Cursor, typename Policy, typename Observer>
NCCLBOT_HD ReplayOutcome replay_with_cursor(Policy& policy, const ReplayTask& task, Observer& observe) {
  Cursor cursor;
  return replay_in_cursor(cursor, policy, task, observe);
}

// Runs one replay; `policy` is any policy type of policy/ with its params set. `observe(t, slot,
// latency)` sees every step (tests record traces with it; the engines pass NoStepObserver).
// Whether (delay, window) is a schedule the delayed cursor holds: D >= 0, W >= 1, W - 1 + D <=
// kMaxReplayDelay.
NCCLBOT_HD inline bool feedback_schedule_fits(int delay, int window) {
  return delay >= 0 && window >= 1 && window <= kMaxReplayDelay + 1 && delay <= kMaxReplayDelay + 1 - window;
}

// Whether a task needs the delayed cursor: feedback that is not update-then-select.
NCCLBOT_HD inline bool feedback_delayed(const ReplayTask& task) {
  return task.delay > 0 || task.window > 1 || task.policy_start > 0;
}

// Undelayed feedback runs the undelayed cursor, so those replays pay nothing for the delayed path.
template <typename Policy, typename Observer = NoStepObserver>
NCCLBOT_HD ReplayOutcome replay_one(Policy& policy, const ReplayTask& task, Observer observe = Observer{}) {
  constexpr int kArms = kPolicyArms<Policy>;
  if (feedback_delayed(task))
    return replay_with_cursor<ReplayCursorT<kMaxReplayDelay, kArms>>(policy, task, observe);
  return replay_with_cursor<ReplayCursorT<0, kArms>>(policy, task, observe);
}

}  // namespace ncclbot
