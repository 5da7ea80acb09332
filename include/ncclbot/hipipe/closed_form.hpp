#pragma once
// Closed forms on the model, used as references and as the seed of HiPIPE's chunk-count search.
#include "ncclbot/hipipe/network.hpp"

namespace ncclbot::hipipe {

// Unpipelined hierarchical all-reduce (K = 1, default order): the sum of the 2D stage times.
double sequential_allreduce_us(const Network& network, double bytes);

// One ring of p ranks: 2(p-1)alpha + 2(p-1)/p * M / B.
double ring_allreduce_us(int ranks, double latency_us, double bandwidth_GBps, double bytes);

// The chunk count that minimises the equal-chunk estimate
//   T(K) ~ sum a + M sum b / K + (K-1)(a* + b* M/K),
// with * the bottleneck dimension (RS and AG on it together): K* = sqrt((sum b - b*) M / a*),
// clamped to [1, max_chunks]; max_chunks when the bottleneck has no latency.
double estimated_chunk_count(const Network& network, double bytes, int max_chunks);

}  // namespace ncclbot::hipipe
