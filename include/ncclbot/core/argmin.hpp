#pragma once
// NCCL's selection rule over a per-arm value table: skip negative (ignored) and non-finite entries,
// take the smallest with a strict '<' scanning slots in order, so ties go to the lowest algorithm
// index, then the lowest protocol index (nccl-plugin-api.md section 1.2).
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

// Returns the chosen slot, or -1 when no slot in `mask` has a usable value. `value(slot)` is any
// callable returning the slot's value (float or double).
template <typename ValueOf>
NCCLBOT_HD int nccl_argmin(ArmMask mask, ValueOf value) {
  int best = -1;
  double best_value = 0.0;
  for (int s = 0; s < kNumArms; ++s) {
    if (!mask.has(s)) continue;
    const double v = double(value(s));
    if (!(v >= 0.0) || v > 3.0e38) continue;  // negative = ignored; NaN and inf are never picked
    if (best < 0 || v < best_value) {
      best = s;
      best_value = v;
    }
  }
  return best;
}

}  // namespace ncclbot
