#pragma once
// What a policy sees of the context it chooses for, and the interface every policy implements.
//
// The same inputs exist in all three builds: the replay engines fill them from a SweepView, the
// tuner plugin fills them from the cost table NCCL hands it (cost >= 0 valid, -1 ignored), so a
// plugin drives exactly the same code as a replay:
//
//   PolicyContext ctx{mask, prior_us, nullptr, -1};   // prior_us: float[21], < 0 = no prediction
//   AnyPolicy policy = make_policy(config);           // config: parsed from NCCLBOT_POLICY
//   policy.reset(ctx);
//   for each call t = 0, 1, ...:
//     StepRandom rng(seed, replay_id, t);
//     int slot = policy.select(rng);                  // always a slot in ctx.mask
//     ... run the collective, measure latency_us ...
//     policy.update(slot, latency_us);
//
// Every policy type P = XPolicyT<N> (policy/*.hpp, a class template over the N arms a context may
// hold) has the same members, all NCCLBOT_HD, none allocating or throwing: `P::Params params` (plain
// data), `void reset(const PolicyContextT<N>&)`,
// `int select(StepRandom&)`, `void update(int slot, double latency_us)` and
// `int commit(StepRandom&) const` (the arm it would settle on now: the replay's "final" arm).
// reset() must precede the first select(); select() never returns a slot outside the mask while
// the mask is non-empty, and returns -1 only for an empty mask.
#include <cstdint>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/arm_index_set.hpp"
#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/philox.hpp"

namespace ncclbot {

// A context with room for N arms. Its arm indices ("slots") are NCCL's algorithm x protocol slots
// in a slot-shaped context (N = kNumArms, `arms` null) and positions in its list of arms, in Arm
// order, in a knob sweep's (`arms` names each): the policies never ask which, they choose indices.
template <int N>
struct PolicyContextT {
  ArmMaskT<N> mask;                      // the arms that may be chosen
  const float* prior_us = nullptr;       // [N] model prediction in µs, < 0 = none; may be null
  const double* true_mean_us = nullptr;  // [N] measured means; the oracle's input only
  int fixed_slot = -1;                   // a frozen decision (supervised selectors, exported tables)
  const Arm* arms = nullptr;             // [N] the arm at each index; null: index s is slot s

  // Whether NCCL can run index s (HiPIPE, simulated only, it cannot: core/arm.hpp).
  NCCLBOT_HD bool nccl_runs(int s) const { return is_nccl_slot(arms ? arms[s].slot() : s); }
};
using PolicyContext = PolicyContextT<kNumArms>;

// Engine-side caches a policy may read when it selects; never part of its state, so a policy's
// state is the same whoever drives it. The CPU engine hands UCB1 a table of its exploration term
// (replay/exploration_table.hpp); the kernels and the plugin pass none and the policy computes it.
struct SelectAids {
  const double* exploration = nullptr;  // exploration_bonus(exploration_total0 + p) at entry p
  double exploration_total0 = 0.0;      // the starting total the table was built for
  // portable_log() of each of the context's samples, [slot][sample] as the sweep holds them, for a
  // policy that learns on the log scale (update_log): the same bits it would compute itself.
  const double* sample_logs = nullptr;
};

// select() with the engine's aids for a policy that can use them, plain select() otherwise.
template <typename Policy>
NCCLBOT_HD int select_with(Policy& policy, StepRandom& rng, const SelectAids& aids) {
  if constexpr (requires { policy.select(rng, aids); })
    return policy.select(rng, aids);
  else
    return policy.select(rng);
}

// Decisions made whose latencies have not reached the policy yet (the replay's delayed feedback,
// the plugin's leader windows, docs/replay.md "Pending decisions"): count[s] calls of slot s are
// in flight, `total` in all. A policy with select_pending() counts each as a pull observed at the
// arm's current estimate (a "hallucinated" observation, as in batched GP-UCB: Desautels, Krause
// and Burdick, JMLR 2014), so a batch decided from one state spreads its exploration instead of
// repeating one arm. Greedy's, epsilon-greedy's and Thompson sampling's means do not move with such
// a pull, so only their cold start counts them (an arm with a pull pending is not untried:
// ArmStats::cold_start_pending); past it epsilon-greedy explores as before and Thompson sampling
// draws its own sample for every decision, so a batch already varies.
template <int N>
struct PendingPullsT {
  uint16_t count[N];
  int total;
};
using PendingPulls = PendingPullsT<kNumArms>;

// select_pending() for a policy that has one and some decision pending, else select_with(): with
// nothing pending every policy decides bit for bit as it would undelayed.
template <typename Policy, int N>
NCCLBOT_HD int select_pending_with(Policy& policy, StepRandom& rng, const SelectAids& aids,
                                   const PendingPullsT<N>& pending) {
  if constexpr (requires { policy.select_pending(rng, pending); }) {
    if (pending.total > 0) return policy.select_pending(rng, pending);
  }
  return select_with(policy, rng, aids);
}

// Whether slot s has a prior prediction that can warm its mean: a usable cost (core/argmin.hpp)
// that is a time, so not 0 (NCCL's 0 marks a choice, not a duration).
template <int N>
NCCLBOT_HD bool has_prior_value(const PolicyContextT<N>& ctx, int s) {
  return ctx.prior_us != nullptr && usable_cost(ctx.prior_us[s]) && ctx.prior_us[s] > 0.0f;
}

}  // namespace ncclbot
