#pragma once
// Host-side tables that let the CPU engine skip per-step work which is the same in every replay of
// one (policy config, context): UCB1's exploration term sqrt(2 ln t) (policy/ucb1.hpp). Tables are
// cached per thread and keyed by the exact starting total, so the values are bit-identical to what
// the policy would compute itself. They reach the policy as SelectAids at select time and are never
// part of its state; a policy type that takes no aids is left untouched.
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

// exploration_bonus(t) for t = total0, total0 + 1.0, ... (each +1.0 one rounding, as ArmStats
// adds), `horizon` entries. The pointer is valid on the calling thread until a later call there
// evicts the table (at most 64 are kept): use it for the replays at hand, then ask again.
const double* exploration_bonus_table(double total0, int horizon);

// The aids the replays of `task` by `policy` (params set) can use: none, unless the policy reads an
// exploration table at select time.
template <typename Policy>
SelectAids exploration_aids(const Policy& policy, const ReplayTask& task) {
  SelectAids aids;
  if constexpr (requires(Policy p, StepRandom r) { p.select(r, aids); }) {
    Policy probe = policy;  // reset() on a copy tells the starting total of this context
    probe.reset(sweep_policy_context(task.sweep, task.context, task.fixed_slot));
    aids.exploration_total0 = probe.stats.total;
    aids.exploration = exploration_bonus_table(probe.stats.total, task.horizon);
  }
  return aids;
}

}  // namespace ncclbot
