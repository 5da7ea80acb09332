#pragma once
// The valid arms of a context packed in ascending slot order, so policies loop over K entries
// rather than 21 slots and "first in packed order" is NCCL's tie rule (lowest algorithm, then
// lowest protocol).
#include <cstdint>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

struct ArmSet {
  int k;                   // number of valid arms (no initialisers: policies live in unions)
  int8_t slot[kNumArms];   // packed index -> slot
  int8_t index[kNumArms];  // slot -> packed index, -1 if not valid

  NCCLBOT_HD void assign(ArmMask mask) {
    k = 0;
    for (int s = 0; s < kNumArms; ++s) {
      index[s] = -1;
      if (mask.has(s)) {
        index[s] = int8_t(k);
        slot[k++] = int8_t(s);
      }
    }
  }
};

}  // namespace ncclbot
