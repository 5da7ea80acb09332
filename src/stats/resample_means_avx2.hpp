#pragma once
// Bootstrap means of four resamples at once in AVX2 lanes (x86-64 only; see the .cpp).
#include <cstdint>
#include <span>

namespace ncclbot {

// True when this CPU can run resample_means_x4_avx2().
bool cpu_has_avx2();

// Means of resamples b .. b+3 of x (and, when y is not empty, of y at the same draws), exactly as
// the scalar path computes them (bootstrap.cpp: draw i into partial sum i mod 4, combined as
// ((s0 + s1) + (s2 + s3)) / n). Returns false, writing nothing, when a draw of any of the four
// could have been rejected by Lemire's method; the caller then takes the scalar path, which handles
// rejection exactly. Requires cpu_has_avx2() and x.size() >= 4.
bool resample_means_x4_avx2(std::span<const double> x, std::span<const double> y, uint64_t seed, uint64_t b,
                            double tx[4], double ty[4]);

}  // namespace ncclbot
