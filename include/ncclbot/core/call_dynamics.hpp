#pragma once
// What a job's calls see beyond a sweep's measured samples (docs/simulator.md "The observation
// model"): warm-up, level shifts and the one-time cost of an algorithm's first use. A sweep carries
// these (the simulator sets them; a sweep of real per-iteration timings has them already inside its
// samples and carries none), and the replay core applies them call by call:
//
//   observed latency of call t = sample x_t * level_t[a] * job_warm(t) * arm_warm(k)
//     level_t[a] = shared_t * own_t[a]: 1 before the first change point
//     job_warm(t) = 1 + job_warmup * (W_job - t) / W_job  for t < W_job, else 1
//     arm_warm(k) = 1 + arm_warmup * (W_arm - k) / W_arm  for k < W_arm, else 1 (k = earlier plays of a)
//   loss of call t = (mu[a] * level_t[a] * arm_warm(k) + F) / min_b (mu[b] * level_t[b]) - 1
//     F = the context's first-use cost when call t is the first use of a's algorithm and some other
//         algorithm was used before (the best arm's algorithm has to be set up by anyone), else 0
//
// The job's own warm-up slows every arm alike, so it changes what a policy observes but not what a
// choice costs relative to another. Level shifts: change points come at rate shift_rate per call
// (geometric gaps); at each, the fabric's shared level is drawn afresh, uniform in
// [1 - shift_size, 1 + shift_size], and so is each arm's own part, uniform in
// [1 - shift_arm_size, 1 + shift_arm_size]. The shared part moves every arm alike, so it changes
// what a policy observes and never which arm is best; only the own part (off unless asked for)
// can change the best arm mid-horizon. Every draw is Philox on lanes of the
// replay's own stream that nothing else uses, so a replay stays a pure function of (sweep, seed,
// stream id, policy), on the CPU and on the device (only +, -, *, / and portable_log).
#include <cstdint>

#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/philox.hpp"
#include "ncclbot/core/portable_math.hpp"

namespace ncclbot {

struct CallDynamics {
  float job_warmup = 0.0f;      // relative slowdown of the job's first call
  int job_warmup_calls = 0;     // W_job: calls over which it fades
  float arm_warmup = 0.0f;      // relative slowdown of an arm's first play
  int arm_warmup_calls = 0;     // W_arm
  float shift_rate = 0.0f;      // level-shift change points per call, in [0, 1)
  float shift_size = 0.0f;      // half-width of the level shared by all arms, in [0, 1)
  float shift_arm_size = 0.0f;  // half-width of each arm's own part of its level, in [0, 1)

  NCCLBOT_HD bool active() const {
    return (job_warmup > 0.0f && job_warmup_calls > 0) || (arm_warmup > 0.0f && arm_warmup_calls > 0) ||
           shifts();
  }
  NCCLBOT_HD bool shifts() const { return shift_rate > 0.0f && (shift_size > 0.0f || shift_arm_size > 0.0f); }
  bool operator==(const CallDynamics&) const = default;
};

// The counter word-1 lanes of the replay's Philox stream the dynamics draw from: far above the
// policies' lanes (1, 2, ... a few) and the sample draw's lane 0.
inline constexpr uint32_t kShiftGapLane = 0x5D000000u;
inline constexpr uint32_t kShiftLevelLane = 0x5D000001u;   // kShiftLevelLane + i: own parts of arms 4i..4i+3
inline constexpr uint32_t kShiftSharedLane = 0x5D000080u;  // word 0: the shared level

NCCLBOT_HD inline double warm_factor(float warmup, int calls, uint32_t k) {
  if (!(warmup > 0.0f) || calls <= 0 || k >= uint32_t(calls)) return 1.0;
  return 1.0 + double(warmup) * double(uint32_t(calls) - k) / double(calls);
}

// Calls from one change point to the next (>= 1): geometric with success probability shift_rate,
// drawn from block (n, kShiftGapLane) of the stream for the n-th change point (n = 0 is the first).
NCCLBOT_HD inline uint32_t shift_gap(const CallDynamics& d, uint64_t seed, uint64_t id, uint32_t n) {
  const double u = uniform_open01(philox_block(seed, id, n, kShiftGapLane).v[0]);
  const double g = portable_log(u) / portable_log(1.0 - double(d.shift_rate));  // >= 0
  return g >= 4.0e9 ? 4000000000u : 1u + uint32_t(g);
}

// The call of change point n, whose predecessor came at call `at`: `at` plus its gap, 0xffffffff
// (never) once past the counter's range.
NCCLBOT_HD inline uint32_t next_change_point(const CallDynamics& d, uint64_t seed, uint64_t id, uint32_t n,
                                             uint32_t at) {
  const uint32_t gap = shift_gap(d, seed, id, n);
  return at > 0xffffffffu - gap ? 0xffffffffu : at + gap;
}

// The level every arm shares after the n-th change point (n >= 1): 1 when shift_size is 0.
NCCLBOT_HD inline double shared_level(const CallDynamics& d, uint64_t seed, uint64_t id, uint32_t n) {
  if (!(d.shift_size > 0.0f)) return 1.0;
  const uint32_t w = philox_block(seed, id, n, kShiftSharedLane).v[0];
  return 1.0 + double(d.shift_size) * (2.0 * uniform_open01(w) - 1.0);
}

// The level of arm `slot` after the n-th change point (n >= 1; before the first every level is 1):
// `shared` (shared_level of the same n) times the arm's own part, 1 when shift_arm_size is 0.
NCCLBOT_HD inline double shifted_level(const CallDynamics& d, uint64_t seed, uint64_t id, uint32_t n,
                                       int slot, double shared) {
  if (!(d.shift_arm_size > 0.0f)) return shared;
  const uint32_t w = philox_block(seed, id, n, kShiftLevelLane + uint32_t(slot) / 4u).v[slot % 4];
  return shared * (1.0 + double(d.shift_arm_size) * (2.0 * uniform_open01(w) - 1.0));
}

}  // namespace ncclbot
