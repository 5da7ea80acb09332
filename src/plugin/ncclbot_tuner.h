/* The C surface of libnccl-tuner-ncclbot.so beyond NCCL's own plugin symbols: a harness or an
 * application that measures collective latencies itself reports them here instead of (or in
 * addition to) the profiler. Resolve it with dlsym(handle, "ncclbotReportLatency"). */
#ifndef NCCLBOT_TUNER_H_
#define NCCLBOT_TUNER_H_

#include <stddef.h>
#include <stdint.h>

#if defined(NCCLBOT_BUILDING_PLUGIN)
#define NCCLBOT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define NCCLBOT_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One measured latency (microseconds) of a collective run with (algo, proto) = NCCL's indices
 * (Tree 0 ... PAT 6; LL 0, LL128 1, Simple 2). commId is the communicator hash NCCL passed to the
 * tuner's init (v5); with older NCCL pass 0 and the communicator's nRanks/nNodes. collType is
 * ncclFunc_t (AllReduce 4, ...), nBytes as the tuner saw it. Returns 0 when the latency joined an
 * online-mode context of this process, 1 otherwise (unknown communicator or context, other mode,
 * a value outside [0.001, 1e9] us, which is neither learned from nor logged). Thread-safe; never
 * blocks on the network. */
typedef int (*ncclbotReportLatency_t)(uint64_t commId, int nRanks, int nNodes, int collType, size_t nBytes,
                                      int algo, int proto, double latencyUs);
NCCLBOT_PLUGIN_EXPORT int ncclbotReportLatency(uint64_t commId, int nRanks, int nNodes, int collType,
                                               size_t nBytes, int algo, int proto, double latencyUs);

#ifdef __cplusplus
}
#endif

#endif
