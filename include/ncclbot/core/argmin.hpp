#pragma once
// NCCL's selection rule over a per-arm value table: skip entries that are not usable, take the
// smallest with a strict '<' scanning slots in order, so ties go to the lowest algorithm index, then
// the lowest protocol index (NCCL src/enqueue.cc; docs/plugin.md "NCCL's ABI, as ncclbot declares
// it"). One rule for the cost model, the replay (AUTO, the oracle, the best arm) and the plugin
// (NCCL's pick, the arms it may choose).
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

// Whether a cost or time entry names an arm that can be chosen: non-negative and finite. NCCL writes
// -1 (NCCL_ALGO_PROTO_IGNORE) for an arm it cannot run and skips every negative entry; NaN and
// infinity are never chosen. 0 is usable ("pick this", as a tuner marks its choice).
NCCLBOT_HD constexpr bool usable_cost(double v) {
  return v >= 0.0 && v <= 1.7976931348623157e308;  // false for NaN, -1 and +inf
}

// Returns the chosen slot, or -1 when no slot in `mask` has a usable value. `value(slot)` is any
// callable returning the slot's value (float or double). `n` is how many indices the mask has room
// for: a context's arm indices are slots in a slot-shaped sweep (kNumArms) and positions in its
// list of arms in a knob sweep (core/arm_index_set.hpp), listed in Arm order, so the rule is the
// same: the lowest algorithm, protocol, then NCCL's own knobs first.
template <typename Mask, typename ValueOf>
NCCLBOT_HD int nccl_argmin(const Mask& mask, ValueOf value, int n = kNumArms) {
  int best = -1;
  double best_value = 0.0;
  for (int s = 0; s < n; ++s) {
    if (!mask.has(s)) continue;
    const double v = double(value(s));
    if (!usable_cost(v)) continue;
    if (best < 0 || v < best_value) {
      best = s;
      best_value = v;
    }
  }
  return best;
}

}  // namespace ncclbot
