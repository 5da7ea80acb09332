#pragma once
// Where a replay thread of the CUDA kernels keeps its state (docs/cuda.md "Per-thread state"): the
// policy object (its learned arrays) and, for undelayed replays, the replay cursor (the context's
// losses, the call dynamics' levels and play counts) live in the block's dynamic shared memory, one
// slot per thread, instead of in a per-thread local-memory stack frame. Plain maths, so the host
// tests it without a GPU.
//
// Bank conflicts: the slots are an array of structures, so lane i's copy of a field sits i * stride
// bytes from lane 0's. Shared memory serves a warp's 8-byte accesses in two halves of 16 lanes,
// each lane touching two of the 32 four-byte banks; the 16 lanes hit 16 distinct bank pairs exactly
// when stride / 8 is odd. The stride is therefore rounded up to an odd multiple of 8 bytes, so lanes
// reading the same field never conflict (lanes reading different arms' entries may, as anywhere).
#include <algorithm>
#include <cstddef>

#include "ncclbot/replay/launch_shape.hpp"  // kWarpThreads

namespace ncclbot {

// `bytes` rounded up to an odd multiple of 8.
constexpr size_t bank_friendly_stride(size_t bytes) {
  const size_t words = std::max<size_t>(1, (bytes + 7) / 8);
  return 8 * (words % 2 == 1 ? words : words + 1);
}

// The bytes of a thread's slot: the policy, then (when `cursor_bytes` > 0) the cursor at
// cursor_offset(), 8-byte aligned.
constexpr size_t cursor_offset(size_t policy_bytes) {
  return (policy_bytes + 7) / 8 * 8;
}
constexpr size_t shared_slot_stride(size_t policy_bytes, size_t cursor_bytes) {
  return bank_friendly_stride(cursor_offset(policy_bytes) + cursor_bytes);
}

// Threads per block when every thread needs `stride` (> 0) bytes of shared memory and a block may
// have `max_block_bytes` (the device's opt-in limit, cudaDevAttrMaxSharedMemoryPerBlockOptin:
// 227 KiB on the H100 and H200): `requested` when that many fit, else the most whole warps that fit;
// 0 when not even one warp does.
constexpr int threads_for_shared_state(int requested, size_t stride, size_t max_block_bytes) {
  if (requested < 1 || stride == 0) return 0;
  const size_t fit = max_block_bytes / stride;
  if (fit >= size_t(requested)) return requested;
  return int(fit / kWarpThreads * kWarpThreads);
}

}  // namespace ncclbot
