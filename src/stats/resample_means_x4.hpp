#pragma once
// Bootstrap means (and the draws the p99 keeps) of four resamples at once in the four 64-bit lanes of 256-bit
// registers (x86-64 with AVX2, and faster with AVX-512VL's 32 registers and rotates); see the .cpp.
#include <cstddef>
#include <cstdint>
#include <span>

namespace ncclbot {

enum class SimdLevel { none, avx2, avx512vl };

// What this CPU can run, checked once.
SimdLevel simd_level();

// Means of resamples b .. b+3 of x (and, when y is not empty, of y at the same draws), exactly as
// the scalar path computes them (bootstrap.cpp: draw i into partial sum i mod 4, combined as
// ((s0 + s1) + (s2 + s3)) / n). Returns false, writing nothing, when a draw of any of the four
// could have been rejected by Lemire's method (the caller then takes the scalar path, which handles
// rejection exactly), or when level is none. Requires level <= simd_level() and x.size() >= 4.
bool resample_means_x4(SimdLevel level, std::span<const double> x, std::span<const double> y, uint64_t seed,
                       uint64_t b, double tx[4], double ty[4]);

// The units that resamples b .. b+3 draw (n = keep.size() each, as the scalar ResampleStream draws
// them) filtered by keep[u], in draw order: resample b + r's into kept[r * n ...], their number into
// count[r] (the bootstrap p99 keeps the units ranked near the top). kept holds 4 n slots. Returns
// false, as above, when a draw of any of the four was rejected, or when level is none.
bool resample_kept_x4(SimdLevel level, std::span<const uint8_t> keep, uint64_t seed, uint64_t b,
                      uint32_t* kept, size_t count[4]);

}  // namespace ncclbot
