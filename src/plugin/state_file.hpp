#pragma once
// NCCLBOT_STATE: the online learners' policy states kept across jobs (docs/plugin.md "State file").
//
// Format 3, little-endian, every field written and read one by one (no structs, no pointers):
//   "NCCLBOTS", u32 version 3, u32 0, u64 fingerprint (FNV-1a of the canonical policy spec),
//   u32 policy kind, u32 arms (0: one per algorithm x protocol; 1: knob arms, the lists follow:
//   u32 n, n x u32 channel counts, then for LL, LL128, Simple: u32 n, n x u32 chunk bytes),
//   u32 entry count, entries, u64 FNV-1a checksum of everything before it.
//   entry: u32 nranks, u32 nnodes, u32 context key, u32 slot mask, u64 steps, u64 first nBytes,
//          21 x f32 prior, u32 value count, u32 0, value count x 64-bit values
// Over knob arms a context's arms are its slots crossed with the lists (knob_seed.hpp), so the
// slots and the lists name them; a file of other lists (or of slot arms) is another learner's.
// The values are the policy's learned fields in the order of its visit_state() (include/ncclbot/
// policy), doubles as IEEE bits and integers as int64; each is checked against the bounds the
// policy gives, the mask against the prior, the count against what the policy reads. A file that
// fails any check is ignored with one WARN, never trusted. Format 2 (no arms field, slot arms) is
// still read.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

inline constexpr uint32_t kStateFileVersion = 3;
inline constexpr size_t kMaxStateFileBytes = size_t(32) << 20;
// Entries a file may hold: 65,536 over slot arms; 2,048 over knob arms, whose entries each hold a
// policy of up to 512 arms in memory (about 37 KB: 75 MB at most, whatever a file claims).
template <int N>
inline constexpr uint32_t kMaxStateEntries = N <= kNumArms ? 1u << 16 : 2048u;
// A policy's values per entry: 4096 over slot arms, 64 per arm over knob arms.
template <int N>
inline constexpr uint32_t kMaxStateValues = N <= kNumArms ? 4096u : 64u * uint32_t(N);

template <int N>
struct StateEntryT {
  uint32_t nranks = 0, nnodes = 0, key = 0;
  uint32_t mask = 0;  // the slots NCCL's cost table left usable (the knob arms cross them)
  uint64_t steps = 0;
  uint64_t bytes = 0;              // nBytes of the context's first call (keys its random stream)
  float prior[kNumNcclArms] = {};  // NCCL's cost table at the context's first call
  AnyPolicyT<N> policy;            // rebuilt from the engine, then the stored fields

  // Context `key` of a communicator of `nranks` ranks on `nnodes` nodes, seeded at its first call of
  // `bytes` by a table leaving `slots` usable at `slot_prior` (by slot), `steps` decisions taken.
  static StateEntryT of(int nranks, int nnodes, int key, ArmMask slots, const float* slot_prior,
                        uint64_t steps, uint64_t bytes, const AnyPolicyT<N>& policy) {
    StateEntryT e;
    e.nranks = uint32_t(nranks);
    e.nnodes = uint32_t(nnodes);
    e.key = uint32_t(key);
    e.mask = slots.bits;
    e.steps = steps;
    e.bytes = bytes;
    std::copy(slot_prior, slot_prior + kNumNcclArms, e.prior);
    e.policy = policy;
    return e;
  }
};

// The state of learners over N arms: kNumArms (OnlineLearner) or knob arms (KnobLearner and
// KnobLeaderLearner, with their lists).
template <int N>
class StateFileT {
 public:
  // `knobs`: the lists every context's arms cross (required over knob arms, ignored otherwise).
  explicit StateFileT(const PolicyEngine& engine, const KnobSpec* knobs = nullptr)
      : engine_(engine), knobs_(knobs) {}

  // Reads `path`. true: entries loaded, or no such file (no entries). false + `warning`: refused
  // (not a regular file, too large, not ncclbot's) or unusable (corrupt, another policy).
  bool load(const std::string& path, std::string* warning);
  // Merges this object's entries into the file at `path` and replaces it atomically; false +
  // `warning` when the path is refused or writing fails (nothing is then changed).
  bool save(const std::string& path, std::string* warning) const;

  // The bytes of the format above, and their parser (false + `why`; the fuzzer's entry point).
  std::string encode() const;
  bool decode(const std::string& bytes, std::string* why);

  // Replaces any entry with the same (nranks, nnodes, key).
  void put(StateEntryT<N> entry);
  const std::vector<StateEntryT<N>>& entries() const { return entries_; }

  // The fresh policy of a context whose table left `mask` at `prior` (over knob arms: on the
  // crossing with the lists); false when the crossing holds more than N arms.
  bool fresh_policy(uint32_t mask, const float* prior, AnyPolicyT<N>* policy) const;

 private:
  static constexpr bool kKnobs = N > kNumArms;

  const PolicyEngine& engine_;
  const KnobSpec* knobs_;
  std::vector<StateEntryT<N>> entries_;
};

using StateEntry = StateEntryT<kNumArms>;
using StateFile = StateFileT<kNumArms>;
using KnobStateEntry = StateEntryT<kKnobReplayArms>;
using KnobStateFile = StateFileT<kKnobReplayArms>;

// Whether `bytes` begin like an ncclbot state file (any version): what may be replaced.
bool has_state_magic(const std::string& bytes);

// State file reads and writes, one at a time in the process (communicators may share the file).
std::mutex& state_file_mutex();

uint64_t fnv1a64(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull);

}  // namespace ncclbot::plugin
