#pragma once
// Tuner v6's getChunkSize over knob arms (docs/plugin.md "Knob mode"), for every role that plays a
// knob decision (KnobTuner, KnobLeaderTuner, FollowerTuner): getCollInfo leaves its collective's
// decided arm here and getChunkSize hands NCCL the arm's chunk, clamped to what NCCL can run. NCCL
// calls getChunkSize after getCollInfo on the thread that enqueued, per channel (nChannels 1 and
// per-channel bytes outside CollNet), up to three times per collective, so it is matched to the
// pending decision of its collective when it names the decision's algorithm and protocol, never to
// its own bytes.
#include <array>
#include <cstddef>
#include <cstdint>

#include "ncclbot/core/arm.hpp"
#include "plugin/comm_identity.hpp"
#include "plugin/context_key.hpp"
#include "plugin/first_calls.hpp"

namespace ncclbot::plugin {

class ChunkHandover {
 public:
  // What getCollInfo left for one collective: the decided arm of call `call` of context `key`, and
  // where the role records the chunk handed over (`record`, may be null).
  struct Pending {
    int key = -1;  // -1: nothing pending
    Arm arm{};
    uint64_t call = 0;
    uint32_t* record = nullptr;
  };

  // getCollInfo of collective `coll` (a known one) decided nothing with a chunk of its own yet.
  void clear(int coll) { pending_[size_t(coll)].key = -1; }
  // getCollInfo of `coll` played `p`.
  void expect(int coll, const Pending& p) { pending_[size_t(coll)] = p; }
  // getChunkSize: sets *chunk_size to the pending arm's chunk (clamped to [grain, NCCL's value], the
  // clamp said once per context) when NCCL runs its algorithm and protocol, and returns the pending
  // decision; null (and *chunk_size untouched) otherwise. Never an error back to NCCL.
  const Pending* hand_over(const CommIdentity& id, int coll, int algo, int proto, size_t* chunk_size);

 private:
  std::array<Pending, kNumKnownCollectives> pending_{};
  FirstCalls clamped_;  // contexts whose clamped chunk was logged
};

}  // namespace ncclbot::plugin
