#pragma once
// What each rank puts in its send buffer and what it must find in its receive buffer after one
// collective, in float32 with sum as the reduction. Every value is a small integer, so every sum is
// exact in float and the check compares bit for bit. Sizes follow nccl-tests' `size` (the sweep CSV's
// bytes): AllGather's is the gathered buffer, ReduceScatter's the buffer before scattering.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ncclbot/core/collective.hpp"

namespace ncclbot::sweep_tool {

struct BufferLayout {
  size_t send_count = 0;  // floats in the send buffer
  size_t recv_count = 0;  // floats in the receive buffer
  size_t call_count = 0;  // the count argument NCCL takes for this collective
};

// Why `bytes` cannot be run as `collective` over `ranks` ranks (not whole floats, not divisible by
// the ranks, zero), or nullptr.
const char* layout_fault(Collective collective, uint64_t bytes, int ranks);
// The layout of a size layout_fault accepts.
BufferLayout buffer_layout(Collective collective, uint64_t bytes, int ranks);

float send_value(int rank, size_t i);
// Element i of `rank`'s receive buffer, or nullopt where the collective leaves it unspecified
// (Reduce's non-root ranks).
std::optional<float> expected_value(Collective collective, int rank, int ranks, const BufferLayout& layout,
                                    size_t i);
// "" when every element is as expected, else the first wrong one ("element 17 is 5, expected 6").
std::string check_received(Collective collective, int rank, int ranks, const BufferLayout& layout,
                           const float* recv);

}  // namespace ncclbot::sweep_tool
