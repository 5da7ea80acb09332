// Four ResampleStreams stepped in the four 64-bit lanes of 256-bit registers: xoshiro256** needs
// only shifts, adds and xors on 64-bit lanes, and Lemire's product of a 32-bit word by n is one
// vpmuludq. Each lane draws exactly the words its scalar stream would draw (low half, then high
// half of each output), and each resample's sums are added in the scalar order, so the means are
// bit-identical to the scalar path's; only draws that might be rejected (low half of the product
// below n, about 4n / 2^32 per four draws) make the caller redo the four resamples in scalar code.
// The kernel (resample_means_x4_kernel.inc) is compiled twice, for AVX2 and for AVX-512VL, through
// target attributes, and chosen after a run-time CPU check; the rest of the program keeps the
// baseline instruction set.
#include "resample_means_x4.hpp"

#include "ncclbot/stats/resample_stream.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NCCLBOT_X4_KERNELS 1
#endif

namespace ncclbot {

#if NCCLBOT_X4_KERNELS

namespace {
namespace avx2 {
#define NCCLBOT_SIMD_TARGET "avx2"
#include "resample_means_x4_kernel.inc"
#undef NCCLBOT_SIMD_TARGET
}  // namespace avx2
namespace avx512vl {
#define NCCLBOT_SIMD_TARGET "avx2,avx512f,avx512vl"
#include "resample_means_x4_kernel.inc"
#undef NCCLBOT_SIMD_TARGET
}  // namespace avx512vl
}  // namespace

SimdLevel simd_level() {
  static const SimdLevel level = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
                                     ? SimdLevel::avx512vl
                                 : __builtin_cpu_supports("avx2") ? SimdLevel::avx2
                                                                  : SimdLevel::none;
  return level;
}

bool resample_means_x4(SimdLevel level, std::span<const double> x, std::span<const double> y, uint64_t seed,
                       uint64_t b, double tx[4], double ty[4]) {
  switch (level) {
    case SimdLevel::avx512vl:
      return avx512vl::means(x, y, seed, b, tx, ty);
    case SimdLevel::avx2:
      return avx2::means(x, y, seed, b, tx, ty);
    case SimdLevel::none:
      break;
  }
  return false;
}

bool resample_kept_x4(SimdLevel level, std::span<const uint8_t> keep, uint64_t seed, uint64_t b,
                      uint32_t* kept, size_t count[4]) {
  const uint32_t n = uint32_t(keep.size());
  switch (level) {
    case SimdLevel::avx512vl:
      return avx512vl::kept_units(keep.data(), n, seed, b, kept, count);
    case SimdLevel::avx2:
      return avx2::kept_units(keep.data(), n, seed, b, kept, count);
    case SimdLevel::none:
      break;
  }
  return false;
}

#else  // no x86-64 kernels on this platform: the scalar path does all the work

SimdLevel simd_level() {
  return SimdLevel::none;
}
bool resample_means_x4(SimdLevel, std::span<const double>, std::span<const double>, uint64_t, uint64_t,
                       double*, double*) {
  return false;
}
bool resample_kept_x4(SimdLevel, std::span<const uint8_t>, uint64_t, uint64_t, uint32_t*, size_t*) {
  return false;
}

#endif

}  // namespace ncclbot
