#pragma once
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

// The smallest power of two at least n (1 for n <= 1): the leaves of a tournament over n entries.
NCCLBOT_HD constexpr int pow2_at_least(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace ncclbot
