#pragma once
// Two doubles in one register for host-only loops (GCC/Clang vector extensions: SSE2 on x86-64,
// NEON on AArch64). Element-wise +, -, *, <, == and ?: are the same IEEE operations as on scalars,
// so a loop over pairs gives the scalar loop's bits (builds use -ffp-contract=off: no fused
// multiply-add). nvcc's compilations keep their scalar loops.
#if !defined(__CUDACC__)
namespace ncclbot {

using HostDoublePair = double __attribute__((vector_size(16)));

inline HostDoublePair load_pair(const double* p) {
  HostDoublePair v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

inline void store_pair(double* p, HostDoublePair v) {
  __builtin_memcpy(p, &v, sizeof v);
}

}  // namespace ncclbot
#endif
