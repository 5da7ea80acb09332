#pragma once
// A partial replay result: what one shard (`replay --shard I/N --out FILE`) or one MPI rank
// computed, and what `ncclbot merge` and MPI rank 0 combine into the unsharded output.
//
// File layout (little-endian):
//   line 1  "ncclbot-partial v1"
//   line 2  one-line JSON header: {"identity": {...}, "shard": {"index", "count"},
//           "units": {"total", "count"}, "payload": {"doubles", "seeds_kept", "fnv1a64"}}
//   then    IEEE-754 doubles: the seed-averaged online losses of the shard's units (I, I+N, ...)
//           then their final losses; with seeds_kept = S > 0 (tune needs the spread across
//           seeds) also every unit's S online losses [unit][seed], then its S final losses. The
//           exact bits travel, so a merge reproduces the single-process numbers bit for bit.
// The identity names everything that must agree for partials to belong together: program
// version, command, the sweep's SHA-256, the expanded policy configs, the selected contexts, the
// seeds, first seed, horizon and backend. Anything else is a foreign partial.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/scale/shard.hpp"

namespace ncclbot {

nlohmann::json replay_identity(const ReplayJob& job, std::string_view sweep_sha256, std::string_view backend);

// The first field whose value differs between two identities ("command" and "phase" before the
// others, so that a partial of another command or phase says so), or "" when they are equal.
std::string first_identity_difference(const nlohmann::json& a, const nlohmann::json& b);

std::string encode_replay_partial(const nlohmann::json& identity, ShardSpec shard, size_t total_units,
                                  const ReplaySlice& slice);

struct ReplayPartial {
  std::string source;  // file name (or "rank K") for messages
  nlohmann::json identity;
  ShardSpec shard;
  size_t total_units = 0;
  ReplaySlice slice;
};

// Throws InputError(source, 0, why) for anything malformed, truncated or corrupted.
ReplayPartial decode_replay_partial(std::string_view bytes, const std::string& source);

// The partials of one run, in any order -> the unsharded results (seed-averaged losses only).
// Throws InputError naming the file for a foreign partial (identity or shard count differs from
// the first one's) or a duplicated shard, and UsageError naming the missing shards.
ReplayResults merge_replay_partials(const std::vector<ReplayPartial>& parts);

}  // namespace ncclbot
