#pragma once
// How an online role (local, leader, follower) plays its decision into NCCL's cost table: the
// chosen entry set to 0, and one INFO line at each context's first call naming NCCL's pick and
// ncclbot's (and, with NCCL_ALGO / NCCL_PROTO set, the arms the table leaves). A knob arm's channel
// count goes into nChannels and its chunk to getChunkSize (chunk_handover.hpp).
#include <atomic>
#include <cstddef>

#include "plugin/chunk_handover.hpp"
#include "plugin/comm_identity.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/decided_arm.hpp"
#include "plugin/first_calls.hpp"

namespace ncclbot::plugin {

class OnlinePick {
 public:
  // `restricted`: NCCL_ALGO or NCCL_PROTO is set, so the first-call lines name the arms left.
  explicit OnlinePick(bool restricted) : restricted_(restricted) {}

  // Plays decision `slot` (-1: NCCL's own) of context `key`; a decided arm this rank's table lacks
  // keeps NCCL's choice, with one WARN per communicator. NCCL's hot path.
  // Whether the decided arm is now the table's pick.
  bool play(const CommIdentity& id, CostTable& table, int coll, size_t bytes, int key, int slot) {
    if (first_calls_.first(key)) log_first_call(id, table, coll, bytes, slot);
    if (slot < 0) return false;
    if (table.choose(slot)) return true;
    if (!warned_unusable_.exchange(true)) warn_unusable(id, coll, bytes, slot);
    return false;
  }
  // play() of a whole arm, decided for call `call` of `key`: its channel count into `nchannels` and
  // its chunk left for getChunkSize, when the arm is the table's pick.
  void play_arm(const CommIdentity& id, CostTable& table, int coll, size_t bytes, int key,
                const DecidedArm& d, uint64_t call, int* nchannels) {
    chunks_.clear(key_collective(key));
    if (!play(id, table, coll, bytes, key, d.slot)) return;
    if (d.channels > 0 && nchannels != nullptr) *nchannels = int(d.channels);
    if (d.chunk_bytes > 0) chunks_.expect(key_collective(key), {key, d.arm(), call, nullptr});
  }
  // Tuner v6: the chunk of the arm play_arm left for this collective (ChunkHandover::hand_over).
  const ChunkHandover::Pending* hand_over(const CommIdentity& id, int coll, int algo, int proto,
                                          size_t* chunk_size) {
    return chunks_.hand_over(id, coll, algo, proto, chunk_size);
  }

 private:
  void log_first_call(const CommIdentity& id, const CostTable& table, int coll, size_t bytes, int slot) const;
  static void warn_unusable(const CommIdentity& id, int coll, size_t bytes, int slot);

  const bool restricted_;
  FirstCalls first_calls_;
  ChunkHandover chunks_;
  std::atomic<bool> warned_unusable_{false};
};

}  // namespace ncclbot::plugin
