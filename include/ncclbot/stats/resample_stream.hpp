#pragma once
// Random words for one bootstrap or permutation resample, so that resample b of a run depends only
// on (seed, b): results are identical for any thread count or split of the work.
//
// Seed mapping (documented in docs/statistics.md): the 256-bit state of a xoshiro256** generator
// (Blackman & Vigna 2018) is the two Philox4x32-10 blocks (core/philox.hpp, the generator of the
// replays) with key = (seed mod 2^32, seed >> 32) and counter = (block, b mod 2^32, b >> 32, purpose)
// for block = 0, 1. Each xoshiro256** output gives two 32-bit words, low half first. Philox makes
// the resamples' streams independent; xoshiro then draws the thousands of indices of one resample
// at about a fifth of Philox's cost per word. NCCLBOT_HD: the CUDA engine draws the same resamples
// on the device (replay/replay_aggregate.hpp).
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
  NCCLBOT_HD ResampleStream(uint64_t seed, uint64_t resample, ResamplePurpose purpose) {
    const uint32_t key0 = uint32_t(seed), key1 = uint32_t(seed >> 32);
    const uint32_t lo = uint32_t(resample), hi = uint32_t(resample >> 32), tag = uint32_t(purpose);
    const Philox4x32 a = philox4x32_10(Philox4x32{{0u, lo, hi, tag}}, key0, key1);
    const Philox4x32 b = philox4x32_10(Philox4x32{{1u, lo, hi, tag}}, key0, key1);
    s_[0] = uint64_t(a.v[0]) | uint64_t(a.v[1]) << 32;
    s_[1] = uint64_t(a.v[2]) | uint64_t(a.v[3]) << 32;
    s_[2] = uint64_t(b.v[0]) | uint64_t(b.v[1]) << 32;
    s_[3] = uint64_t(b.v[2]) | uint64_t(b.v[3]) << 32;
    if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;  // xoshiro's one forbidden state
  }

  // The xoshiro256** state, for engines that step several streams in SIMD lanes. Meaningful only at
  // a 64-bit boundary (after an even number of words; the SIMD kernel reads it right after
  // construction), and set_state() resumes the stream at such a boundary.
  NCCLBOT_HD void get_state(uint64_t out[4]) const {
    for (int i = 0; i < 4; ++i) out[i] = s_[i];
  }
  NCCLBOT_HD void set_state(const uint64_t in[4]) {
    for (int i = 0; i < 4; ++i) s_[i] = in[i];
    have_high_ = false;
  }

  NCCLBOT_HD uint32_t next_word() {
    if (have_high_) {
      have_high_ = false;
      return uint32_t(pending_ >> 32);
    }
    pending_ = next64();
    have_high_ = true;
    return uint32_t(pending_);
  }

  // Four successive next_below(n) values into out[0..3], exactly the ones four calls would give.
  // At a 64-bit boundary two outputs hold the four words; only if one of them lands where Lemire's
  // method might reject (low half of the product < n: probability 4n / 2^32 per call) are the four
  // draws redone one by one from the saved state. Saves the alternating half-word branch and lets
  // the four multiplications run side by side.
  NCCLBOT_HD void next4_below(uint32_t n, uint32_t* out) {
    if (!have_high_) {
      const uint64_t saved[4] = {s_[0], s_[1], s_[2], s_[3]};
      const uint64_t w0 = next64(), w1 = next64();
      const uint64_t m0 = (w0 & 0xffffffffu) * n, m1 = (w0 >> 32) * n;
      const uint64_t m2 = (w1 & 0xffffffffu) * n, m3 = (w1 >> 32) * n;
      if (!((uint32_t(m0) < n) | (uint32_t(m1) < n) | (uint32_t(m2) < n) | (uint32_t(m3) < n))) {
        out[0] = uint32_t(m0 >> 32);
        out[1] = uint32_t(m1 >> 32);
        out[2] = uint32_t(m2 >> 32);
        out[3] = uint32_t(m3 >> 32);
        return;
      }
      for (int i = 0; i < 4; ++i) s_[i] = saved[i];
    }
    for (int i = 0; i < 4; ++i) out[i] = next_below(n);
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
  NCCLBOT_HD static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  NCCLBOT_HD uint64_t next64() {  // xoshiro256**
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  uint64_t s_[4];
  uint64_t pending_ = 0;
  bool have_high_ = false;
};

}  // namespace ncclbot
