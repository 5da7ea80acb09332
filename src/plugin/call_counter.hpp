#pragma once
// This rank's call index in each context of its communicator (leader and follower roles, whose
// decisions are kept by call index).
#include <cstdint>
#include <mutex>
#include <vector>

#include "plugin/context_key.hpp"

namespace ncclbot::plugin {

class CallCounter {
 public:
  CallCounter() : next_(kNumContextKeys, 0) {}
  // The index of this call of context `key` (0 <= key < kNumContextKeys).
  uint64_t next(int key) {
    std::lock_guard<std::mutex> lock(mu_);
    return next_[size_t(key)]++;
  }

 private:
  std::mutex mu_;
  std::vector<uint64_t> next_;  // on the heap: every role of a communicator shares one handle size
};

}  // namespace ncclbot::plugin
