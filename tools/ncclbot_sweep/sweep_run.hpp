#pragma once
// The sweep itself, on every rank: for each context, every listed arm and NCCL's own pick are called
// once in a fixed order (the probe: NCCL honours or refuses each forced arm, and every result is
// checked), then `warmup` untimed rounds, then `iterations` timed rounds, each in its own seeded
// order (call_order.hpp). After each round the ranks agree on the slowest rank's times, which rank 0
// keeps; after each context rank 0 rewrites the files (sweep_results.hpp).
//
// A refused arm is recorded as unavailable. A rank that fails (an NCCL or CUDA error, a wrong result,
// a refusal of an arm it honoured before, ranks that disagree about a refusal) prints one line naming
// itself, the context, the arm and the reason, and ends every rank with exit code 1: the other ranks
// may be waiting in a collective for it. The contexts finished before it stay in the files.
#include <ostream>

#include "collective_device.hpp"
#include "rank_group.hpp"
#include "sweep_options.hpp"
#include "sweep_results.hpp"

namespace ncclbot::sweep_tool {

// The contexts done (rank 0's; the other ranks' hold no samples).
std::vector<ContextResult> run_sweep(const SweepOptions& options, RankGroup& group, CollectiveDevice& device,
                                     const SweepFiles& files);

}  // namespace ncclbot::sweep_tool
