#pragma once
// Host-side tables that let the CPU engine skip per-step work which is the same in every replay of
// one (policy config, context): UCB1's exploration term sqrt(2 ln t) (policy/ucb1.hpp), and the
// logs of the context's samples that Thompson sampling learns from (policy/thompson.hpp). Both are
// per thread (exploration tables keyed by the exact starting total) and bit-identical to what the
// policy would compute itself. They reach the policy as SelectAids (at select time, or with the
// observation) and are never part of its state; a policy type that takes no aids is left untouched.
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

// exploration_bonus(t) for t = total0, total0 + 1.0, ... (each +1.0 one rounding, as ArmStats
// adds), `horizon` entries. The pointer is valid on the calling thread until a later call there
// evicts the table (at most 64 are kept): use it for the replays at hand, then ask again.
const double* exploration_bonus_table(double total0, int horizon);

// portable_log() of every sample of context `c` of `v`, [slot][sample] as the view holds them. The
// pointer is valid on the calling thread until its next call.
const double* sample_log_table(const SweepView& v, int c);

// The aids the replays of `task` by `policy` (params set) can use: none, unless the policy reads an
// exploration table at select time, or learns on the log scale (the samples' logs).
template <typename Policy>
SelectAids exploration_aids(const Policy& policy, const ReplayTask& task) {
  SelectAids aids;
  if constexpr (requires { policy.base; }) {
    aids = exploration_aids(policy.base, task);  // a wrapper (policy/conservative.hpp): its policy's
  } else {
    if constexpr (requires(Policy p) { p.update_log(0, 0.0); })
      aids.sample_logs = sample_log_table(task.sweep, task.context);
    if constexpr (requires(Policy p, StepRandom r) { p.select(r, aids); }) {
      Policy probe = policy;  // reset() on a copy tells the starting total of this context
      probe.reset(sweep_policy_context<kPolicyArms<Policy>>(task.sweep, task.context, task.fixed_slot,
                                                            task.slots_only));
      aids.exploration_total0 = probe.stats.total;
      aids.exploration = exploration_bonus_table(probe.stats.total, task.horizon);
    }
  }
  return aids;
}

}  // namespace ncclbot
