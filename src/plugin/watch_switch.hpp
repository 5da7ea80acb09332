#pragma once
// Switching NCCL's kernel-channel events call by call (docs/plugin.md "The cost of watching").
//
// NCCL hands every profiler init the address of one process-wide int, its activation mask, and
// loads it again at each collective's API call, just before that call's CollApi event (NVIDIA/nccl
// src/enqueue.cc collTaskAppend: ncclProfilerStartGroupApiEvent, then ncclProfilerStartCollApiEvent;
// NVIDIA/nccl src/plugin/profiler.cc); the task keeps what it loaded, and its kernel is instrumented only
// when that holds KernelCh. The tuner decides the call later, at group end. So a call's watching is decided
// before the call is known: at each CollApi event the switch reads what this call loaded, and sets KernelCh
// for the call it expects next, the one that followed this call's context last time (training loops repeat
// their collectives in one order), as that context's learner wishes (LatencySink::watch_next). A wrong guess
// costs a latency or watches one call more, never a wrong credit: each call's Coll record knows whether its
// channels will come.
//
// Dormant (never reads or writes a mask) until a learner with a watch rule is set up, and again once
// the last one is gone (KernelCh then back on); writes only masks that a live profiler context was
// given.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "plugin/latency_sink.hpp"

namespace ncclbot::plugin {

class WatchSwitch {
 public:
  // A profiler init (v5 and later: its CollApi events say when a call loaded the mask) was given
  // `mask`; its finalize gives it back.
  void attach(int* mask);
  void detach(int* mask);
  // A learner with a watch rule was set up, or went.
  void rule_added();
  void rule_removed();
  bool active() const;

  struct ApiCall {
    bool watched = true;     // the mask this call loaded held KernelCh
    bool predicted = false;  // a call before it named the context it expected next
    bool expected = false;   // and that was this call's
  };
  // A collective's API call, in context `key` of `sink`'s communicator (null: a communicator that
  // learns nothing, such as a follower's), loaded `mask`: whether it is watched, and KernelCh set for
  // the call expected next.
  ApiCall api_call(int* mask, const std::shared_ptr<LatencySink>& sink, int key);

 private:
  struct Site {
    const LatencySink* sink = nullptr;  // identity only
    int key = -1;
    auto operator<=>(const Site&) const = default;
  };
  struct Next {
    std::weak_ptr<LatencySink> sink;
    Site site;
  };
  // The most (communicator, context) pairs whose successor is kept; past it they are forgotten.
  static constexpr size_t kMaxSites = 4096;

  bool wanted_locked(const Next& next) const;
  // KernelCh on or off in every attached mask.
  void set_locked(bool watch);

  mutable std::mutex mu_;
  std::atomic<int> rules_{0};                // read without the lock on every call while dormant
  std::vector<std::pair<int*, int>> masks_;  // attached masks, with their init counts
  std::map<Site, Next> next_;                // the call that followed each site's last call
  Site last_{};
  bool has_last_ = false;
};

}  // namespace ncclbot::plugin
