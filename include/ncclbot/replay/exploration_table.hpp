#pragma once
// Host-side tables that let the CPU engine skip per-step work which is the same in every replay of
// one (policy config, context): UCB1's sqrt(2 ln t) (policy/ucb1.hpp). Tables are cached per
// thread and keyed by the exact starting total, so the values are bit-identical to what the policy
// would compute itself; a policy type without such a member is left untouched.
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

// sqrt(2 * portable_log(t)) for t = total0, total0 + 1.0, ... (each +1.0 one rounding, as ArmStats
// adds), `horizon` entries. The pointer is valid on the calling thread until a later call there
// evicts the table (at most 64 are kept): use it for the replays at hand, then ask again.
const double* exploration_bonus_table(double total0, int horizon);

// Points `policy` (params set, state not yet reset) at the tables its replays of `task` can use.
template <typename Policy>
void attach_exploration_tables(Policy& policy, const ReplayTask& task) {
  if constexpr (requires { policy.bonus_table; }) {
    Policy probe = policy;  // reset() on a copy tells the starting total of this context
    probe.reset(sweep_policy_context(task.sweep, task.context, task.fixed_slot));
    policy.bonus_total0 = probe.stats.total;
    policy.bonus_table = exploration_bonus_table(probe.stats.total, task.horizon);
  }
}

}  // namespace ncclbot
