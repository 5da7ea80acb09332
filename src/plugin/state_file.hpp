#pragma once
// NCCLBOT_STATE: the online learners' policy states kept across jobs (docs/plugin.md "State file").
//
// Format 2, little-endian, every field written and read one by one (no structs, no pointers):
//   "NCCLBOTS", u32 version 2, u32 0, u64 fingerprint (FNV-1a of the canonical policy spec),
//   u32 policy kind, u32 entry count, entries, u64 FNV-1a checksum of everything before it.
//   entry: u32 nranks, u32 nnodes, u32 context key, u32 arm mask, u64 steps, u64 first nBytes,
//          21 x f32 prior, u32 value count, u32 0, value count x 64-bit values
// The values are the policy's learned fields in the order of its visit_state() (include/ncclbot/
// policy), doubles as IEEE bits and integers as int64; each is checked against the bounds the
// policy gives, the mask against the prior, the count against what the policy reads. A file that
// fails any check is ignored with one WARN, never trusted.
//
// Saving never hurts what the path names: it replaces only a regular file that starts with the
// magic (or creates one); a symlink, a device, a FIFO or a user's own file is left alone with a
// WARN. Under an flock on the directory it re-reads the file, merges (entries of other contexts
// and shapes kept, this job's replace its own), writes a temporary file opened O_EXCL|O_NOFOLLOW
// beside it, fsyncs it, renames it over the target and fsyncs the directory.
#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

inline constexpr uint32_t kStateFileVersion = 2;
inline constexpr size_t kMaxStateFileBytes = size_t(32) << 20;
inline constexpr uint32_t kMaxStateEntries = 1u << 16;
inline constexpr uint32_t kMaxStateValues = 4096;

struct StateEntry {
  uint32_t nranks = 0, nnodes = 0, key = 0, mask = 0;
  uint64_t steps = 0;
  uint64_t bytes = 0;              // nBytes of the context's first call (keys its random stream)
  float prior[kNumNcclArms] = {};  // NCCL's cost table at the context's first call
  PolicyState policy;              // rebuilt from the engine, then the stored fields
};

class StateFile {
 public:
  explicit StateFile(const PolicyEngine& engine) : engine_(engine) {}

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
  void put(StateEntry entry);
  const std::vector<StateEntry>& entries() const { return entries_; }

 private:
  const PolicyEngine& engine_;
  std::vector<StateEntry> entries_;
};

// Whether `bytes` begin like an ncclbot state file (any version): what may be replaced.
bool has_state_magic(const std::string& bytes);

uint64_t fnv1a64(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull);

}  // namespace ncclbot::plugin
