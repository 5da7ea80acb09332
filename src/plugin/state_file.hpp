#pragma once
// Learned statistics that outlive a job: the per-context policy state of online mode, keyed by
// (nRanks, nNodes, context key). Binary, versioned, checksummed (docs/plugin.md "State file"):
//   "NCCLBOTS" | u32 version | u32 policy state size | u64 policy fingerprint | u32 entries | u32 0
//   entries (fixed size) | u64 FNV-1a of everything before it
// A missing file is an empty state; a corrupt one (bad magic, size, checksum) or a foreign one
// (other version, other policy or build) is ignored with a warning and never trusted. Saving
// writes a temporary file beside the target, fsyncs it and renames it over the target, so a
// reader sees the old or the new file, never a torn one.
#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"

namespace ncclbot::plugin {

inline constexpr uint32_t kStateFileVersion = 1;

struct StateEntry {
  uint32_t nranks = 0, nnodes = 0, key = 0, mask = 0, steps = 0;
  uint64_t bytes = 0;              // nBytes of the context's first call (keys its random stream)
  float prior[kNumNcclArms] = {};  // NCCL's cost table at the context's first call
  std::vector<uint8_t> policy;     // the policy's plain-data state, `state_size` bytes
};

class StateFile {
 public:
  StateFile(uint64_t fingerprint, uint32_t state_size) : fingerprint_(fingerprint), state_size_(state_size) {}

  // false + `warning` when the file exists but is unreadable, corrupt or foreign (entries cleared).
  // A missing file is not a warning: it returns true with no entries.
  bool load(const std::string& path, std::string* warning);
  bool save(const std::string& path, std::string* warning) const;

  // Replaces any entry with the same (nranks, nnodes, key).
  void put(StateEntry entry);
  const std::vector<StateEntry>& entries() const { return entries_; }
  uint64_t fingerprint() const { return fingerprint_; }
  uint32_t state_size() const { return state_size_; }

 private:
  uint64_t fingerprint_;
  uint32_t state_size_;
  std::vector<StateEntry> entries_;
};

uint64_t fnv1a64(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull);

}  // namespace ncclbot::plugin
