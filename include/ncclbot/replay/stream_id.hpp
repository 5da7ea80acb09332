#pragma once
// The replay id that selects a context's Philox subsequence (core/philox.hpp). It is a function of
// what the context *is* (collective, nodes, GPUs per node, bytes), never of its position in a
// sweep, a shard or a thread, so:
//   - results do not depend on thread count, sharding, filtering or the sweep's other contexts;
//   - every policy config sees the same sample stream on a context (common random numbers: paired
//     comparisons between policies have lower variance);
//   - the tuner plugin, which knows exactly these four values (nNodes, nRanks / nNodes, the
//     collective type and its byte count), derives the same id and replays the same stream.
// The fabric is left out on purpose (the plugin does not know it).
// id = splitmix64 finaliser of (bytes) xor'ed with the packed (collective, nodes, gpus_per_node).
#include <cstdint>

#include "ncclbot/core/hd.hpp"

namespace ncclbot {

NCCLBOT_HD inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// collective: NCCL's ncclFunc_t index (core/collective.hpp).
NCCLBOT_HD inline uint64_t replay_stream_id(int collective, int nodes, int gpus_per_node, uint64_t bytes) {
  const uint64_t shape = (uint64_t(uint32_t(collective) & 0xffu) << 56) |
                         (uint64_t(uint32_t(nodes) & 0xffffffu) << 32) | uint64_t(uint32_t(gpus_per_node));
  return splitmix64_mix(splitmix64_mix(bytes) ^ shape);
}

}  // namespace ncclbot
