#pragma once
// The valid arms of a context packed in ascending slot order, so policies loop over K entries
// rather than N slots and "first in packed order" is NCCL's tie rule (lowest algorithm, then
// lowest protocol).
#include <cstdint>
#include <type_traits>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/arm_index_set.hpp"
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

template <int N>
struct ArmSetT {
  using Index = ArmIndexT<N>;  // a byte while N fits one (a slot-shaped context keeps its layout)
  int k;                       // number of valid arms (no initialisers: policies live in unions)
  Index slot[N];               // packed index -> slot
  Index index[N];              // slot -> packed index, -1 if not valid

  template <typename Mask>
  NCCLBOT_HD void assign(const Mask& mask) {
    k = 0;
    for (int s = 0; s < N; ++s) {
      index[s] = -1;
      if (mask.has(s)) {
        index[s] = Index(k);
        slot[k++] = Index(s);
      }
    }
  }
};
using ArmSet = ArmSetT<kNumArms>;

}  // namespace ncclbot
