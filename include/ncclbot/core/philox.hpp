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
// cuRAND's curand_philox4x32_x.h defines a global mulhilo32 as well; Random123's is renamed while
// its header is read, so one file may include both (tests/gpu/curand_stream.cu does).
#define mulhilo32 ncclbot_random123_mulhilo32
#include <Random123/philox.h>
#undef mulhilo32

#include <cstdint>

#include "ncclbot/core/hd.hpp"

namespace ncclbot {

struct Philox4x32 {
  uint32_t v[4];
};

// Ten rounds of Random123's Philox4x32 (D. E. Shaw Research's header-only library, which the
// simulator uses too): the one generator of the host, the kernels (Random123 compiles as device
// code under nvcc) and the plugin. tests/core/philox_test.cpp checks it against Random123's
// published known-answer vectors, tests/gpu/curand_stream_test.cpp against cuRAND's documented
// curand_init()/curand() stream on the device.
// Always inlined: a replay step calls it once or twice, and inlined the core can overlap its
// multiply chain with the step's other work (out of line it was a quarter of Thompson sampling's
// replay time).
NCCLBOT_HD NCCLBOT_FORCE_INLINE Philox4x32 philox4x32_10(Philox4x32 ctr, uint32_t key0, uint32_t key1) {
  using Generator = r123::Philox4x32_R<10>;
  const Generator::ctr_type c = {{ctr.v[0], ctr.v[1], ctr.v[2], ctr.v[3]}};
  const Generator::key_type k = {{key0, key1}};
  const Generator::ctr_type out = Generator()(c, k);
  return Philox4x32{{out.v[0], out.v[1], out.v[2], out.v[3]}};
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
  // The j-th word of the step's policy lanes (what the (j+1)-th next_u32() returns), in any order:
  // a policy that needs only some of its words skips the others without shifting them. Uses its own
  // block, so it does not disturb next_u32()'s sequence.
  NCCLBOT_HD uint32_t word(uint32_t j) {
    const uint32_t lane = 1u + j / 4;
    if (lane != word_lane_) {
      word_block_ = philox_block(seed_, id_, step_, lane);
      word_lane_ = lane;
    }
    return word_block_.v[j % 4];
  }

 private:
  uint64_t seed_, id_;
  uint32_t step_;
  uint32_t used_ = 0;
  Philox4x32 block_{};
  uint32_t word_lane_ = 0;  // lane of word_block_; 0 = none (lane 0 is the replay's sample draw)
  Philox4x32 word_block_{};
};

}  // namespace ncclbot
