#pragma once
// The order in which one iteration of one context calls its arms: a Fisher-Yates shuffle drawn from
// Philox keyed by (seed, context, iteration), so it changes every iteration, is the same on every rank
// (ranks must call collectives in the same order or the job hangs) and the same on every rerun.
#include <cstdint>
#include <vector>

namespace ncclbot::sweep_tool {

// A permutation of 0..n-1.
std::vector<int> call_order(uint64_t seed, uint32_t context, uint32_t iteration, int n);

}  // namespace ncclbot::sweep_tool
