#pragma once
// Knob mode's arithmetic, apart from the learner so that tests check it by hand (the arms a context
// learns over are core/context_knob_arms.hpp's): the chunk size NCCL is handed for a decided chunk, and the
// arm a measured call is credited to (docs/plugin.md "Knob mode").
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/context_knob_arms.hpp"
#include "ncclbot/core/knob_limits.hpp"
#include "ncclbot/core/knob_spec.hpp"

namespace ncclbot::plugin {

// The chunk handed to NCCL when the decision wants `want` bytes of protocol `proto` and NCCL
// computed `nccl` (getChunkSize's value on entry): a multiple of the protocol's grain within
// [grain, nccl], so never the 0 that NCCL divides by nor more than its buffers hold. `nccl` itself
// when it is below the grain (there is nothing to choose).
inline uint64_t clamp_chunk(uint64_t want, int proto, uint64_t nccl) {
  const uint64_t grain = uint64_t(chunk_grain_bytes(proto));
  if (grain == 0 || nccl < grain) return nccl;
  const uint64_t v = std::min(want, nccl) / grain * grain;
  return v < grain ? grain : v;
}

// What the profiler or the report says ran. channels < 0: not said (the report function).
struct RanKnobs {
  int algo = -1, proto = -1;
  int channels = -1;
  // Profiler v7: NCCL ran one of its symmetric kernels (no arm of the table, algo and proto -1),
  // and the call's userProfilerTag (0: none), both for the decision log.
  bool symmetric = false;
  uint64_t user_tag = 0;
  // Whether NCCL instrumented the call's kernel (the activation mask its API call read had KernelCh;
  // docs/plugin.md "The cost of watching"): an unwatched call comes with no latency, and settles its
  // decision unlearned.
  bool watched = true;
};

// The arm a call ran when `decided` was asked for and `chunk_set` is the chunk getChunkSize handed
// NCCL for it (0: none, NCCL's own). Channels: a decision of NCCL's own count ran NCCL's count (arm
// channels 0); an explicit count ran the count NCCL reports, which is less when NCCL overrode it
// (small messages, registered buffers, its 32 KiB cells). Chunk: the one handed over, on the
// decided algorithm and protocol only (getChunkSize is matched to them); another algorithm and
// protocol ran NCCL's chunk, with the decided channel count (NCCL applies a tuner's nChannels to
// whichever arm it runs).
inline Arm arm_that_ran(const Arm& decided, const RanKnobs& ran, uint32_t chunk_set) {
  Arm a{Algo(ran.algo), Proto(ran.proto), decided.channels, 0};
  if (decided.channels != 0 && ran.channels >= 0) a.channels = uint16_t(ran.channels);
  if (a.slot() == decided.slot()) a.chunk_bytes = chunk_set;
  return a;
}

}  // namespace ncclbot::plugin
