#pragma once
// The contexts the plugin handed NCCL and has not taken back. NCCL passes a context back as a bare
// pointer; one finalized twice (or never handed out) points at freed or foreign memory, which
// cannot be read safely, so finalize asks this set instead of the pointer whether it may free it.
#include <atomic>
#include <mutex>
#include <unordered_set>

#include "plugin/nccl_abi.hpp"

namespace ncclbot::plugin {

class LiveHandles {
 public:
  void add(const void* handle, nccl_logger_t logger) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(handle);
    last_logger_.store(logger, std::memory_order_relaxed);
  }
  // Whether `handle` was live; it is not any more.
  bool remove(const void* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.erase(handle) > 0;
  }
  // The logger of the newest context, to warn about a handle that has none of its own left.
  nccl_logger_t last_logger() const { return last_logger_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;
  std::unordered_set<const void*> live_;
  std::atomic<nccl_logger_t> last_logger_{nullptr};
};

}  // namespace ncclbot::plugin
