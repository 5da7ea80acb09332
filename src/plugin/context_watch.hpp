#pragma once
// What a learner keeps of one context to apply a watch rule (policy/watch_rule.hpp) one call ahead
// (docs/plugin.md "The cost of watching"): NCCL reads the profiler's activation mask at a call's API
// entry, before the tuner decides that call, so the plugin decides whether the context's *next* call
// is watched from the arm its latest decision chose, as a settled policy plays it again; an arm still
// being explored is watched until it has `full` latencies. The Philox word is the replay's for the
// step the context's next decision takes (kWatchLane), so it never shifts a policy's draws.
#include <cstdint>
#include <vector>

#include "ncclbot/policy/watch_rule.hpp"

namespace ncclbot::plugin {

struct ContextWatch {
  std::vector<uint32_t> seen;  // latencies learned, by arm index (allocated at the first)
  int last = -1;               // the arm index of the latest decision (-1: NCCL's own, or none yet)

  void learned(int arm, int arms) {
    if (arm < 0 || arm >= arms) return;
    if (seen.empty()) seen.assign(size_t(arms), 0);
    if (seen[size_t(arm)] < UINT32_MAX) ++seen[size_t(arm)];
  }
  uint32_t seen_of(int arm) const { return arm >= 0 && size_t(arm) < seen.size() ? seen[size_t(arm)] : 0; }
  // Whether the context's next call, at Philox step `step` of its stream, is watched under `rule` if
  // it plays `arm` (by default the latest decision's): always when no arm is known.
  bool wants(const WatchRule& rule, uint64_t seed, uint64_t stream_id, uint64_t step, int arm) const {
    if (arm < 0) return true;
    return watch_call(rule, seen_of(arm), seed, stream_id, uint32_t(step));
  }
  bool wants(const WatchRule& rule, uint64_t seed, uint64_t stream_id, uint64_t step) const {
    return wants(rule, seed, stream_id, step, last);
  }
};

}  // namespace ncclbot::plugin
