#pragma once
// Random words for one bootstrap or permutation resample, from a counter-based generator so that
// resample b of a run depends only on (seed, b): results are identical for any thread count or
// split of the work.
//
// Seed mapping (documented in docs/statistics.md): Philox4x32-10 (core/philox.hpp, the generator of
// the replays) with
//   key     = (seed mod 2^32, seed >> 32)
//   counter = (block, b mod 2^32, b >> 32, purpose)
// Blocks 0, 1, 2, ... are used in order; each yields four 32-bit words, consumed x[0] first.
// NCCLBOT_HD: the CUDA engine draws the same resamples on the device (replay/replay_aggregate.hpp).
#include <cstdint>

#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/philox.hpp"

namespace ncclbot {

enum class ResamplePurpose : uint32_t {
  bootstrap_indices = 1,  // which units a bootstrap resample draws
  sign_flips = 2,         // which differences a sign-flip permutation negates
};

class ResampleStream {
 public:
  NCCLBOT_HD ResampleStream(uint64_t seed, uint64_t resample, ResamplePurpose purpose)
      : key0_(uint32_t(seed)),
        key1_(uint32_t(seed >> 32)),
        counter_{{0u, uint32_t(resample), uint32_t(resample >> 32), uint32_t(purpose)}} {}

  NCCLBOT_HD uint32_t next_word() {
    if (used_ == 4) {
      block_ = philox4x32_10(counter_, key0_, key1_);
      ++counter_.v[0];
      used_ = 0;
    }
    return block_.v[used_++];
  }

  // Uniform integer in [0, n), n >= 1, without modulo bias (Lemire 2019, "Fast random integer
  // generation in an interval"): the rare rejected words are simply skipped.
  NCCLBOT_HD uint32_t next_below(uint32_t n) {
    uint64_t m = uint64_t(next_word()) * n;
    uint32_t low = uint32_t(m);
    if (low < n) {
      const uint32_t threshold = uint32_t(-n) % n;
      while (low < threshold) {
        m = uint64_t(next_word()) * n;
        low = uint32_t(m);
      }
    }
    return uint32_t(m >> 32);
  }

 private:
  uint32_t key0_, key1_;
  Philox4x32 counter_;
  Philox4x32 block_{};
  int used_ = 4;
};

}  // namespace ncclbot
