#pragma once
// Which contexts have had their first call logged: one INFO line each, so NCCL's log shows the
// plugin being consulted without a line per call. Lock-free, for NCCL's hot path.
#include <atomic>
#include <cstdint>

#include "plugin/context_key.hpp"

namespace ncclbot::plugin {

class FirstCalls {
 public:
  // true exactly once per context key `key` (0 <= key < kNumContextKeys), for its first caller.
  bool first(int key) {
    std::atomic<uint64_t>& word = bits_[key / 64];
    const uint64_t bit = uint64_t(1) << (key % 64);
    return !(word.load(std::memory_order_relaxed) & bit) && !(word.fetch_or(bit) & bit);
  }

 private:
  std::atomic<uint64_t> bits_[(kNumContextKeys + 63) / 64] = {};
};

}  // namespace ncclbot::plugin
