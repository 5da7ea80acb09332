#pragma once
// Non-delay list scheduling of chunks over the dimensions, the way ASTRA-sim's system layer runs
// them: whenever a dimension is free it starts the earliest-ready stage that needs it; ties go to
// all-gather stages (they drain chunks) and then to the lower chunk id (FIFO).
#include <vector>

#include "ncclbot/hipipe/schedule.hpp"

namespace ncclbot::hipipe {

Schedule list_schedule(const Network& network, const std::vector<double>& chunk_bytes,
                       const std::vector<std::vector<int>>& rs_orders);

// For each dimension, the operations (as indices into schedule.ops) in the order they run.
std::vector<std::vector<int>> dimension_sequences(const Network& network, const Schedule& schedule);

// Earliest start times for given chunk sizes when each dimension must serve its operations in the
// given sequence (a semi-active schedule). The sequences must come from a feasible schedule.
Schedule time_with_fixed_sequences(const Network& network, const std::vector<double>& chunk_bytes,
                                   const std::vector<std::vector<int>>& rs_orders,
                                   const std::vector<std::vector<int>>& sequences);

}  // namespace ncclbot::hipipe
