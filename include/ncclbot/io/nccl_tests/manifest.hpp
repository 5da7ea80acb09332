#pragma once
// What the person who ran the jobs knows and the log may not say: a TOML list of
//   [[run]]
//   file = "all_reduce_ring.out"   # relative to the manifest's folder, or a bare file name
//   algo = "Ring"                  # forced NCCL_ALGO
//   proto = "Simple"               # forced NCCL_PROTO
//   nodes = 2
//   gpus_per_node = 8
//   fabric = "h100-ib"
//   collective = "allreduce"       # only for logs that never name their test
//   channels = 16                  # the knob point: forced channel count (0: NCCL's own)
//   chunk_bytes = 1048576          # and chunk size (0: NCCL's own), on the protocol's grain
// Every key but `file` is optional; a key that contradicts the log is an error (see ingest).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/collective.hpp"

namespace ncclbot::nccl_tests {

struct ManifestEntry {
  long line = 0;         // the [[run]] table
  std::string file;      // as written
  long file_line = 0;    // its `file =` key
  std::string resolved;  // relative to the manifest's folder
  std::optional<Algo> algo;
  std::optional<Proto> proto;
  std::optional<Collective> collective;
  std::optional<int> nodes, gpus_per_node;
  std::optional<std::string> fabric;
  std::optional<int> channels;          // 0..64
  std::optional<uint32_t> chunk_bytes;  // 0, or a multiple of `proto`'s grain up to 2^30
  long channels_line = 0, chunk_line = 0;
};

struct Manifest {
  std::string path;
  std::vector<ManifestEntry> entries;

  // The entry for a log: same file as `resolved`, or, for a bare `file` name that does not
  // exist beside the manifest, the same base name. Two entries for one log are an InputError.
  const ManifestEntry* find(const std::string& log_path) const;
};

Manifest read_manifest(const std::string& path);
Manifest parse_manifest(std::string_view text, const std::string& path);

// Fabric names as the sweep CSV accepts them: 1-64 of [A-Za-z0-9._-].
bool valid_fabric_name(std::string_view name);

}  // namespace ncclbot::nccl_tests
