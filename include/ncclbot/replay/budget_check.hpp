#pragma once
// Whether each replay kept the conservative promise (policy/conservative.hpp): at every call t,
//     sum over calls s <= t of mu(a_s)  <=  (1 + alpha) * t * mu(b),
// mu the arms' means the sweep prices at (its samples' means, or the truth of `price = "truth"`) and
// b NCCL's default setting (AUTO's arm). Any policy can be checked, conservative or not, so the
// check also says how often an unconstrained learner breaks the same budget. The replays are the
// engines' own (replay_one, the same seeds and streams), run again with an observer of each call.
#include <cstdint>
#include <vector>

#include "ncclbot/replay/cpu_engine.hpp"

namespace ncclbot {

struct BudgetCheck {
  // Per config: replays (context x seed) that broke the budget at some call, seeds at which some
  // context broke it, and the earliest call (1-based) of a break, 0 when none did.
  std::vector<int64_t> replays_broken, seeds_broken, first_break_call;
  int64_t replays_per_config = 0;
  // The largest |x - mu| / mu of a sample x of a valid arm in the job's contexts: the relative noise
  // a conservative policy's `noise` must cover for its promise to hold (policy/conservative.hpp);
  // infinite on a sweep drawn afresh (SweepView::fresh), whose log-normal draws have no bound.
  double largest_relative_deviation = 0.0;
};

// Runs every replay of `job` on the CPU and checks it against the budget 1 + alpha (alpha >= 0).
BudgetCheck check_budget(const ReplayJob& job, double alpha);

}  // namespace ncclbot
