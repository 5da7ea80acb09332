#pragma once
// Bounds on the standard normal draw a 32-bit word gives, by the word's top bits: every word w with
// w >> kShift == b has lo[b] <= normal_quantile(uniform_open01(w)) <= hi[b]. Thompson sampling
// (policy/thompson.hpp) uses them on the CPU to find the winning arm from the words alone and to
// evaluate the quantile only when two arms' bounds overlap, which leaves its picks unchanged.
//
// Why the bounds hold: the quantile is increasing in the word, and the computed normal_quantile
// (AS 241, core/portable_math.hpp) is within about 1e-15 relative of it, so between a bucket's first
// and last word every computed value lies within twice that of the two ends. kMargin (1e-12, with
// |z| <= 6.34) is three orders above it. tests/policy/normal_quantile_buckets_test.cpp checks every
// bucket's edge words and a million random words; NCCLBOT_EXHAUSTIVE=1 checks all 2^32.
// Host code only: the CUDA kernels draw every candidate arm instead (the same picks).
#include <cstdint>

#include "ncclbot/core/philox.hpp"
#include "ncclbot/core/portable_math.hpp"

namespace ncclbot {

struct NormalQuantileBuckets {
  static constexpr int kBits = 10;
  static constexpr int kShift = 32 - kBits;
  static constexpr int kCount = 1 << kBits;
  static constexpr double kMargin = 1e-12;
  double lo[kCount];
  double hi[kCount];

  static int bucket(uint32_t word) { return int(word >> kShift); }

  NormalQuantileBuckets() {
    for (int b = 0; b < kCount; ++b) {
      const uint32_t first = uint32_t(b) << kShift;
      const uint32_t last = first | ((uint32_t(1) << kShift) - 1u);
      lo[b] = normal_quantile(uniform_open01(first)) - kMargin;
      hi[b] = normal_quantile(uniform_open01(last)) + kMargin;
    }
  }
};

// Built once per process (16 KiB, about 30 microseconds).
inline const NormalQuantileBuckets& normal_quantile_buckets() {
  static const NormalQuantileBuckets table;
  return table;
}

}  // namespace ncclbot
