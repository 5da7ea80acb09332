#pragma once
// A campaign's knob points: the channel count and chunk size one nccl-tests process runs with,
// besides its forced algorithm and protocol, and what NCCL must be told for each (docs/campaign.md):
//   channels  NCCL_MIN_CTAS = NCCL_MAX_CTAS = N (NCCL reads its environment once per process)
//   chunk     ncclbot's tuner plugin in table mode, one decision table per chunk size (tuner v6
//             getChunkSize, NCCL >= 2.30.3), with the protocol's buffer raised where NCCL would
//             otherwise clamp the chunk to it
// 0 is NCCL's own value for either knob.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/core/collective.hpp"

namespace ncclbot::campaign {

struct KnobPoint {
  int channels = 0;          // 0: NCCL's own; else 1..64
  uint64_t chunk_bytes = 0;  // 0: NCCL's own; else a positive multiple of the protocol's grain
  bool operator==(const KnobPoint&) const = default;
};

// Why a chunk size cannot be asked of `slot` for `collective`, or nullopt: a size off the
// protocol's grain (NCCL would round it down to another) or one needing a buffer above 1 GiB.
std::optional<std::string> why_chunk_left_out(Collective collective, int slot, uint64_t chunk_bytes);

// The buffer variable a chunk needs raised (NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE or NCCL_LL128_BUFFSIZE)
// and its value: NCCL's default doubled until the largest chunk it lets a tuner ask for holds the
// chunk. nullopt when NCCL's default already holds it.
struct BufferSetting {
  std::string var;
  uint64_t bytes = 0;
};
std::optional<BufferSetting> buffer_for_chunk(Collective collective, int slot, uint64_t chunk_bytes);

// The id suffix of a knob point: "" for NCCL's own values, else "-ch8", "-chunk65536" or both.
std::string knob_id_suffix(const KnobPoint& k);

// The decision table a chunk point's runs load, relative to the campaign folder, and its text:
// one row per arm in `slots` that names the arm and the chunk (docs/plugin.md "Table format").
std::string chunk_table_path(uint64_t chunk_bytes);  // tables/chunk-65536.csv
std::string chunk_table(uint64_t chunk_bytes, const std::vector<int>& slots);

// Why NCCL of version `code` (NCCL_VERSION_CODE, 2.30.3 = 23003) cannot run knob point `k` as asked,
// or nullopt: NCCL_MIN_CTAS/NCCL_MAX_CTAS exist since 2.17 and go past 32 since 2.25 (NCCL
// env.rst), a tuner's chunk size needs tuner v6 getChunkSize, first in 2.30.3.
std::optional<std::string> why_nccl_cannot_force(const KnobPoint& k, int code);

// Why NCCL_CHUNK_SIZE is refused wherever a campaign meets it.
inline constexpr const char* kChunkSizeRefusal =
    "NCCL_CHUNK_SIZE is undocumented and unclamped, and NVIDIA/nccl #2408 reports silently wrong results "
    "with it; unset it (a campaign sets chunk sizes with plan --chunk-bytes)";

}  // namespace ncclbot::campaign
