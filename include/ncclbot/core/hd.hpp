#pragma once
// One annotation for code shared by the CPU engine, the CUDA kernels and the tuner plugin, one for
// the few such functions that must be inlined wherever they are called, and one for a lambda on a hot
// path that the host compiler would otherwise call out of line (device code inlines lambdas itself).
#if defined(__CUDACC__)
#define NCCLBOT_HD __host__ __device__
#define NCCLBOT_DEVICE_COMPILE 1
#define NCCLBOT_FORCE_INLINE __forceinline__
#define NCCLBOT_INLINE_LAMBDA
#else
#define NCCLBOT_HD
#define NCCLBOT_FORCE_INLINE inline __attribute__((always_inline))
#define NCCLBOT_INLINE_LAMBDA __attribute__((always_inline))
#endif
