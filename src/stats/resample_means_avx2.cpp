// Four ResampleStreams stepped in the four 64-bit lanes of AVX2 registers: xoshiro256** needs only
// shifts, adds and xors on 64-bit lanes, and Lemire's product of a 32-bit word by n is one
// vpmuludq. Each lane draws exactly the words its scalar stream would draw (low half, then high
// half of each output), and each resample's sums are added in the scalar order, so the means are
// bit-identical to the scalar path's; only draws that might be rejected (low half of the product
// below n, about 4n / 2^32 per four draws) make the caller redo the four resamples in scalar code.
// The function is compiled for AVX2 alone (target attribute) and called after a run-time CPU check.
#include "resample_means_avx2.hpp"

#include "ncclbot/stats/resample_stream.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NCCLBOT_AVX2_KERNEL 1
#endif

namespace ncclbot {

#if NCCLBOT_AVX2_KERNEL

bool cpu_has_avx2() {
  return __builtin_cpu_supports("avx2");
}

namespace {

struct Lanes {
  __m256i s0, s1, s2, s3;  // xoshiro256** state word k of the four streams
};

__attribute__((target("avx2"))) inline __m256i rotl64(__m256i x, int k) {
  return _mm256_or_si256(_mm256_slli_epi64(x, k), _mm256_srli_epi64(x, 64 - k));
}

// One xoshiro256** output per lane: rotl(s1 * 5, 7) * 9 with the multiplications as shift + add.
__attribute__((target("avx2"))) inline __m256i next64(Lanes& g) {
  const __m256i times5 = _mm256_add_epi64(_mm256_slli_epi64(g.s1, 2), g.s1);
  const __m256i rotated = rotl64(times5, 7);
  const __m256i result = _mm256_add_epi64(_mm256_slli_epi64(rotated, 3), rotated);
  const __m256i t = _mm256_slli_epi64(g.s1, 17);
  g.s2 = _mm256_xor_si256(g.s2, g.s0);
  g.s3 = _mm256_xor_si256(g.s3, g.s1);
  g.s1 = _mm256_xor_si256(g.s1, g.s2);
  g.s0 = _mm256_xor_si256(g.s0, g.s3);
  g.s2 = _mm256_xor_si256(g.s2, t);
  g.s3 = rotl64(g.s3, 45);
  return result;
}

template <bool Paired>
__attribute__((target("avx2"))) bool means_x4(const double* x, const double* y, uint32_t n, uint64_t seed,
                                              uint64_t b, double tx[4], double ty[4]) {
  uint64_t state[4][4];  // [word][lane]
  for (int r = 0; r < 4; ++r) {
    uint64_t s[4];
    ResampleStream(seed, b + uint64_t(r), ResamplePurpose::bootstrap_indices).get_state(s);
    for (int k = 0; k < 4; ++k) state[k][r] = s[k];
  }
  Lanes g{_mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[0])),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[1])),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[2])),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state[3]))};
  const __m256i nv = _mm256_set1_epi64x(int64_t(n));
  // Running minimum of every 32-bit half of the products: min_epu32 works per 32-bit position, so
  // the even positions hold the smallest low half (Lemire's rejection test) and odd ones are unused.
  __m256i lowest = _mm256_set1_epi32(-1);
  double sx[4][4] = {}, sy[4][4] = {};  // [lane][partial]
  alignas(32) uint32_t product[4][8];   // [draw in group][32-bit half]: lane r's index at 2r + 1
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i w0 = next64(g), w1 = next64(g);
    const __m256i p[4] = {_mm256_mul_epu32(w0, nv), _mm256_mul_epu32(_mm256_srli_epi64(w0, 32), nv),
                          _mm256_mul_epu32(w1, nv), _mm256_mul_epu32(_mm256_srli_epi64(w1, 32), nv)};
    lowest = _mm256_min_epu32(lowest,
                              _mm256_min_epu32(_mm256_min_epu32(p[0], p[1]), _mm256_min_epu32(p[2], p[3])));
    for (int l = 0; l < 4; ++l) _mm256_store_si256(reinterpret_cast<__m256i*>(product[l]), p[l]);
    for (int l = 0; l < 4; ++l)
      for (int r = 0; r < 4; ++r) {
        sx[r][l] += x[product[l][2 * r + 1]];
        if (Paired) sy[r][l] += y[product[l][2 * r + 1]];
      }
  }
  alignas(32) uint32_t low_half[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(low_half), lowest);
  for (int r = 0; r < 4; ++r)
    if (low_half[2 * r] < n) return false;
  // The last n mod 4 draws: each lane's scalar stream, resumed at its 64-bit boundary.
  if (i < n) {
    const __m256i words[4] = {g.s0, g.s1, g.s2, g.s3};
    for (int k = 0; k < 4; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(state[k]), words[k]);
    for (int r = 0; r < 4; ++r) {
      const uint64_t s[4] = {state[0][r], state[1][r], state[2][r], state[3][r]};
      ResampleStream stream(seed, b + uint64_t(r), ResamplePurpose::bootstrap_indices);
      stream.set_state(s);
      for (uint32_t j = i; j < n; ++j) {
        const uint32_t u = stream.next_below(n);
        sx[r][j & 3] += x[u];
        if (Paired) sy[r][j & 3] += y[u];
      }
    }
  }
  for (int r = 0; r < 4; ++r) {
    tx[r] = ((sx[r][0] + sx[r][1]) + (sx[r][2] + sx[r][3])) / double(n);
    ty[r] = ((sy[r][0] + sy[r][1]) + (sy[r][2] + sy[r][3])) / double(n);
  }
  return true;
}

}  // namespace

bool resample_means_x4_avx2(std::span<const double> x, std::span<const double> y, uint64_t seed, uint64_t b,
                            double tx[4], double ty[4]) {
  const uint32_t n = uint32_t(x.size());
  return y.empty() ? means_x4<false>(x.data(), nullptr, n, seed, b, tx, ty)
                   : means_x4<true>(x.data(), y.data(), n, seed, b, tx, ty);
}

#else  // no AVX2 kernel on this platform: the scalar path does all the work

bool cpu_has_avx2() {
  return false;
}
bool resample_means_x4_avx2(std::span<const double>, std::span<const double>, uint64_t, uint64_t, double*,
                            double*) {
  return false;
}

#endif

}  // namespace ncclbot
