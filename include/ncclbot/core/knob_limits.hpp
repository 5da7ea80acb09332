#pragma once
// What NCCL accepts for the two resource knobs of an arm, channels and chunk size, in one place for
// the sweep readers, the simulator, the campaign and the tuner plugin.
#include <cstdint>

#include "ncclbot/core/hd.hpp"

namespace ncclbot {

// NCCL's MAXCHANNELS: a channel count above it is capped by NCCL's own settings (NCCL
// src/graph/connect.cc:334-345) and wraps in its 8-bit nMaxChannels field (NCCL src/include/comm.h:206).
inline constexpr int kMaxChannels = 64;
// The largest chunk an arm or a decision table may ask for; NCCL clamps any chunk to its buffer's
// maximum (calcCollChunking, NCCL src/enqueue.cc:2182-2320), far below this.
inline constexpr uint64_t kMaxChunkBytes = uint64_t(1) << 30;

// NCCL's chunk grain of protocol `proto` (LL, LL128, Simple: ncclProtoGrainSize, NCCL
// src/include/device.h:328-334), 0 for no protocol. calcCollChunking rounds a tuner's chunk down to
// it, so a chunk that is no multiple is silently another, and one below it becomes 0, which NCCL
// then divides by.
NCCLBOT_HD constexpr uint64_t chunk_grain_bytes(int proto) {
  return proto == 0 ? 16 : proto == 1 ? 1920 : proto == 2 ? 512 : 0;  // LL128: 32 x 8 / 16 x 15 x 8 B
}
// Whether NCCL keeps `chunk` for protocol `proto` as it is: a positive multiple of the grain.
NCCLBOT_HD constexpr bool chunk_fits_grain(uint64_t chunk, int proto) {
  const uint64_t grain = chunk_grain_bytes(proto);
  return grain > 0 && chunk >= grain && chunk % grain == 0;
}

}  // namespace ncclbot
