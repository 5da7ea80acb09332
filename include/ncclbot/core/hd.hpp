#pragma once
// One annotation for code shared by the CPU engine, the CUDA kernels and the tuner plugin, and one
// for the few such functions that must be inlined wherever they are called.
#if defined(__CUDACC__)
#define NCCLBOT_HD __host__ __device__
#define NCCLBOT_DEVICE_COMPILE 1
#define NCCLBOT_FORCE_INLINE __forceinline__
#else
#define NCCLBOT_HD
#define NCCLBOT_FORCE_INLINE inline __attribute__((always_inline))
#endif
