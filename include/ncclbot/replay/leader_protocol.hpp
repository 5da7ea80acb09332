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

namespace ncclbot {

inline constexpr int kLeaderWindow = 4;
inline constexpr int kLeaderPrefetch = 8;
// Why 4 and 8: with windows of 8 asked for 12 calls ahead (lag 12..19, start 16) warm UCB1 lost
// 2.1x its undelayed loss at 500 calls per context; with 4 and 8 (lag 8..11, start 12), 1.8x
// (docs/replay.md "Pending decisions"). A follower has 8 calls to get an answer back.
//
// The first calls of every context are NCCL's own choice while the ranks' cost tables gather (the
// leader starts the policy only once it holds every rank's): the windows a follower asks for at its
// call 0, calls [0, P] rounded up to whole windows, are answered before any table can have reached
// the leader. The policy then decides from call kLeaderStart on, its Philox steps counted from there
// (the replay's policy_start).
inline constexpr int kLeaderStart = (kLeaderPrefetch / kLeaderWindow + 1) * kLeaderWindow;

// The calls whose latencies decide call t: [0, leader_feedback_end(t)).
constexpr uint64_t leader_feedback_end(uint64_t t) {
  const uint64_t start = t - t % uint64_t(kLeaderWindow);
  return start > uint64_t(kLeaderPrefetch) ? start - uint64_t(kLeaderPrefetch) : 0;
}

}  // namespace ncclbot
