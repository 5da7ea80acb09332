#pragma once
// Counter-based Philox4x32-10 (Salmon et al., SC'11; Random123), the one random source of every
// replay, so a replay's numbers depend only on (seed, replay id, step) and never on thread count,
// shard, device or launch shape.
//
// Stream semantics are cuRAND's Philox4_32_10 (curand_kernel.h): after
//   curand_init(seed, subsequence, offset, &state)
// the generator's key is (lo32(seed), hi32(seed)) and its counter is
//   (lo32(offset/4), hi32(offset/4), lo32(subsequence), hi32(subsequence)),
// and curand(&state) returns word offset%4 of philox4x32_10(counter, key), then the next words,
// incrementing the 128-bit counter every 4 words. ncclbot names one 4-word block by
//   philox_block(seed, id, step, lane) = philox4x32_10(counter = (step, lane, lo32(id), hi32(id)),
//                                                      key = (lo32(seed), hi32(seed)))
// which is exactly curand_init(seed, id, 4 * (step + 2^32 * lane)) followed by curand4().
// Lane 0 of a step is the replay core's sample draw; lanes >= 1 are the policy's own draws.
#include <cstdint>

#include "ncclbot/core/hd.hpp"
#if defined(__CUDACC__)
#include <curand_philox4x32_x.h>  // cuRAND's own rounds, used on the device (see philox4x32_10)
#endif

namespace ncclbot {

struct Philox4x32 {
  uint32_t v[4];
};

namespace philox_detail {
// Multipliers and Weyl key increments of Philox4x32 (Random123 philox.h, cuRAND PHILOX_M4x32_*).
inline constexpr uint32_t kM0 = 0xD2511F53u;
inline constexpr uint32_t kM1 = 0xCD9E8D57u;
inline constexpr uint32_t kW0 = 0x9E3779B9u;
inline constexpr uint32_t kW1 = 0xBB67AE85u;

NCCLBOT_HD inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
  const uint64_t p = uint64_t(a) * uint64_t(b);
  *hi = uint32_t(p >> 32);
  return uint32_t(p);
}
}  // namespace philox_detail

// Ten rounds; the key is bumped after each round (the schedule of Random123 and cuRAND alike).
// Device code runs cuRAND's curand_Philox4x32_10 itself, so the kernels draw from cuRAND's
// Philox4_32_10; tests/gpu/curand_stream_test.cpp checks that stream against this host loop.
NCCLBOT_HD inline Philox4x32 philox4x32_10(Philox4x32 ctr, uint32_t key0, uint32_t key1) {
#if defined(__CUDA_ARCH__)
  const uint4 out =
      curand_Philox4x32_10(make_uint4(ctr.v[0], ctr.v[1], ctr.v[2], ctr.v[3]), make_uint2(key0, key1));
  return Philox4x32{{out.x, out.y, out.z, out.w}};
#else
  using namespace philox_detail;
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    const uint32_t lo0 = mulhilo(kM0, ctr.v[0], &hi0);
    const uint32_t lo1 = mulhilo(kM1, ctr.v[2], &hi1);
    ctr = Philox4x32{{hi1 ^ ctr.v[1] ^ key0, lo1, hi0 ^ ctr.v[3] ^ key1, lo0}};
    key0 += kW0;
    key1 += kW1;
  }
  return ctr;
#endif
}

NCCLBOT_HD inline Philox4x32 philox_block(uint64_t seed, uint64_t id, uint32_t step, uint32_t lane) {
  return philox4x32_10(Philox4x32{{step, lane, uint32_t(id), uint32_t(id >> 32)}}, uint32_t(seed),
                       uint32_t(seed >> 32));
}

// Uniform integer in [0, n) from one 32-bit word by the multiply-shift map (Lemire 2019): exact
// integer arithmetic, identical on host and device; its bias (< n / 2^32) is irrelevant here.
NCCLBOT_HD inline uint32_t uniform_below(uint32_t word, uint32_t n) {
  return uint32_t((uint64_t(word) * uint64_t(n)) >> 32);
}

// Uniform double in the open interval (0, 1): (word + 1/2) / 2^32, exact in double.
NCCLBOT_HD inline double uniform_open01(uint32_t word) {
  return (double(word) + 0.5) * (1.0 / 4294967296.0);
}

// The random words a policy may consume during one step: lanes 1, 2, ... of that step, generated
// lazily so that policies that never draw (UCB1, greedy) never pay for Philox.
class StepRandom {
 public:
  NCCLBOT_HD StepRandom(uint64_t seed, uint64_t id, uint32_t step) : seed_(seed), id_(id), step_(step) {}
  NCCLBOT_HD uint32_t next_u32() {
    if (used_ % 4 == 0) block_ = philox_block(seed_, id_, step_, 1u + used_ / 4);
    return block_.v[used_++ % 4];
  }

 private:
  uint64_t seed_, id_;
  uint32_t step_;
  uint32_t used_ = 0;
  Philox4x32 block_{};
};

}  // namespace ncclbot
