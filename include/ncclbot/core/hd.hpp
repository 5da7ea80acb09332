#pragma once
// One annotation for code shared by the CPU engine, the CUDA kernels and the tuner plugin.
#if defined(__CUDACC__)
#define NCCLBOT_HD __host__ __device__
#define NCCLBOT_DEVICE_COMPILE 1
#else
#define NCCLBOT_HD
#endif
