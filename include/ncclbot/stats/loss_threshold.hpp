#pragma once
// "Contexts above 10%": the one rule, used on the CPU, in the CUDA kernels and in the statistics.
//
// A loss is l = r - 1 for the ratio r = mu / mu* of a context's chosen arm to its best arm. The
// loss is above the threshold t when the ratio is: 1 + l > 1 + t, both sides rounded to double.
// Why not l > t: for times 10.0 and 11.0 (exactly 10% slower), r = 11/10 rounds to the double
// nearest 1.1, and l = r - 1 = 0.10000000000000009 (exact by Sterbenz' lemma), which is above the
// double 0.1 = 0.1000000000000000055: the plain comparison counted an exact 10% as above. On the
// ratio scale, 1 + l gives back r exactly (for r in [1, 2]) and 1 + 0.1 rounds to the same double
// nearest 1.1, so the rule reads: above when fl(mu / mu*) > fl(1.1), i.e. a ratio that rounds to
// exactly 1.1 is not above. An averaged loss (online loss over a horizon) is compared the same way.
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

inline constexpr double kLossThreshold = 0.10;

NCCLBOT_HD inline bool loss_above(double loss, double threshold = kLossThreshold) {
  return 1.0 + loss > 1.0 + threshold;
}

}  // namespace ncclbot
