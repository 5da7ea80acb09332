#include "plugin/chunk_handover.hpp"

#include "ncclbot/core/knob_limits.hpp"
#include "plugin/knob_choice.hpp"
#include "plugin/plugin_names.hpp"

namespace ncclbot::plugin {

const ChunkHandover::Pending* ChunkHandover::hand_over(const CommIdentity& id, int coll, int algo, int proto,
                                                       size_t* chunk_size) {
  if (chunk_size == nullptr || coll < 0 || coll >= kNumKnownCollectives) return nullptr;
  const Pending& p = pending_[size_t(coll)];
  const Arm& arm = p.arm;
  if (p.key < 0 || arm.chunk_bytes == 0 || int(arm.algo) != algo || int(arm.proto) != proto) return nullptr;
  const uint64_t nccl = uint64_t(*chunk_size);
  const uint64_t chunk = clamp_chunk(arm.chunk_bytes, proto, nccl);
  // Never an error back to NCCL (it fails the collective on one): a chunk it cannot run is clamped
  // and the clamp said once per context. An arm's chunk means "this size, or NCCL's own where that
  // is smaller", so the call still ran the decided arm (knob_choice.hpp clamp_chunk).
  if (chunk != arm.chunk_bytes && clamped_.first(p.key))
    id.log.info(
        "%s: decided chunk %u B clamped to %llu B (NCCL's chunk here %llu B, grain %llu B); said once "
        "per context",
        collective_label(coll), arm.chunk_bytes, (unsigned long long)chunk, (unsigned long long)nccl,
        (unsigned long long)chunk_grain_bytes(proto));
  *chunk_size = size_t(chunk);
  return &p;
}

}  // namespace ncclbot::plugin
