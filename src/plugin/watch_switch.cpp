#include "plugin/watch_switch.hpp"

#include <algorithm>
#include <atomic>

#include "plugin/nccl_abi.hpp"

namespace ncclbot::plugin {

void WatchSwitch::attach(int* mask) {
  if (mask == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [m, count] : masks_)
    if (m == mask) {
      ++count;
      return;
    }
  masks_.emplace_back(mask, 1);
}

void WatchSwitch::detach(int* mask) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < masks_.size(); ++i)
    if (masks_[i].first == mask && --masks_[i].second == 0) {
      masks_.erase(masks_.begin() + long(i));
      return;
    }
}

void WatchSwitch::rule_added() {
  std::lock_guard<std::mutex> lock(mu_);
  rules_.fetch_add(1, std::memory_order_relaxed);
}

void WatchSwitch::rule_removed() {
  std::lock_guard<std::mutex> lock(mu_);
  if (rules_.load(std::memory_order_relaxed) > 0 && rules_.fetch_sub(1, std::memory_order_relaxed) == 1) {
    // Dormant again: every call is watched, as the profiler's init asked.
    set_locked(true);
    next_.clear();
    has_last_ = false;
  }
}

bool WatchSwitch::active() const {
  return rules_.load(std::memory_order_relaxed) > 0;
}

bool WatchSwitch::wanted_locked(const Next& next) const {
  // A communicator that learns nothing (a follower's, a table's) has no use for a latency; one gone
  // since is unknown, and watched.
  if (next.site.sink == nullptr) return false;
  const std::shared_ptr<LatencySink> sink = next.sink.lock();
  return sink == nullptr || sink->watch_next(next.site.key);
}

void WatchSwitch::set_locked(bool watch) {
  constexpr int kKernel = int(kNcclProfileKernelCh);
  for (auto& [m, count] : masks_) {
    std::atomic_ref<int> word(*m);
    const int now = word.load(std::memory_order_relaxed);
    const int want = watch ? now | kKernel : now & ~kKernel;
    if (want != now) word.store(want, std::memory_order_relaxed);
  }
}

WatchSwitch::ApiCall WatchSwitch::api_call(int* mask, const std::shared_ptr<LatencySink>& sink, int key) {
  ApiCall out;
  if (!active() || mask == nullptr) return out;
  std::lock_guard<std::mutex> lock(mu_);
  if (!active()) return out;
  const auto attached = [&](int* m) {
    return std::any_of(masks_.begin(), masks_.end(), [m](const auto& e) { return e.first == m; });
  };
  if (!attached(mask)) return out;
  out.watched =
      (std::atomic_ref<int>(*mask).load(std::memory_order_relaxed) & int(kNcclProfileKernelCh)) != 0;
  const Site here{sink.get(), key};
  if (has_last_) {
    const auto guess = next_.find(last_);
    out.predicted = guess != next_.end();
    out.expected = out.predicted && guess->second.site == here;
    if (guess != next_.end())
      guess->second = Next{sink, here};
    else {
      if (next_.size() >= kMaxSites) next_.clear();
      next_.emplace(last_, Next{sink, here});
    }
  }
  last_ = here;
  has_last_ = true;
  // The call expected next: the one that followed this site last time; unknown: watched.
  bool watch = true;
  if (const auto it = next_.find(here); it != next_.end()) watch = wanted_locked(it->second);
  set_locked(watch);
  return out;
}

}  // namespace ncclbot::plugin
