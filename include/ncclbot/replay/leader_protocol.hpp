#pragma once
// The tuner plugin's leader protocol as the plugin runs it and the replay models it (docs/plugin.md
// "Decision windows"): in leader mode the leader decides each context's calls kLeaderWindow at a
// time, and a follower asks for a window kLeaderPrefetch calls before its first call, so the
// answer is back before it is needed. The decisions of window k (calls [kW, (k+1)W)) are made from
// the policy's state holding the leader's latencies of the calls before kW - P and no later one
// (held back when they arrive sooner), whoever asks first: so the same calls give the same
// decisions however the ranks' messages interleave, and the replay's (delay P, window W) is the
// plugin's protocol call for call. The decisions after that point are pending (PendingPulls).
//   lag of call t = t - max(0, kW - P): P .. P + W - 1 calls once past the first windows.
#include <cstdint>

#include "ncclbot/core/hd.hpp"

namespace ncclbot {

inline constexpr int kLeaderWindow = 4;
inline constexpr int kLeaderPrefetch = 8;
// Why 4 and 8: smaller windows asked for fewer calls ahead learn sooner but leave a follower less
// time to get each answer back (8 calls here); docs/plugin.md "Decision windows" has the
// measurements of both sides.
//
// The first calls of every context are NCCL's own choice while the ranks' cost tables gather (the
// leader starts the policy only once it holds every rank's): the windows a follower asks for at its
// call 0, calls [0, P] rounded up to whole windows, are answered before any table can have reached
// the leader. The policy then decides from call kLeaderStart on, its Philox steps counted from there
// (the replay's policy_start).
inline constexpr int kLeaderStart = (kLeaderPrefetch / kLeaderWindow + 1) * kLeaderWindow;

// The calls whose latencies decide call t when windows of `window` calls are decided from the
// latencies before `delay` calls ahead of each: [0, feedback_end(t, window, delay)) (the replay's
// schedule, replay/replay.hpp; window 1 is a plain delay, with no division on the replay's step).
template <typename Int>
NCCLBOT_HD constexpr Int feedback_end(Int t, Int window, Int delay) {
  const Int start = window > 1 ? t - t % window : t;
  return start > delay ? start - delay : 0;
}

// The leader's: [0, leader_feedback_end(t)).
NCCLBOT_HD constexpr uint64_t leader_feedback_end(uint64_t t) {
  return feedback_end<uint64_t>(t, kLeaderWindow, kLeaderPrefetch);
}

}  // namespace ncclbot
