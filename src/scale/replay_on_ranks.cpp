#include "ncclbot/scale/replay_on_ranks.hpp"

#include <cstring>

#include "ncclbot/scale/replay_partial.hpp"

namespace ncclbot {

namespace {

// Partials as one byte string: for each, its length (8 bytes, little-endian) then its bytes.
std::string pack(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) {
    const uint64_t n = p.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += p;
  }
  return out;
}

std::vector<std::string> unpack(const std::string& bytes) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at + sizeof(uint64_t) <= bytes.size()) {
    uint64_t n = 0;
    std::memcpy(&n, bytes.data() + at, sizeof n);
    at += sizeof n;
    parts.push_back(bytes.substr(at, size_t(n)));
    at += size_t(n);
  }
  return parts;
}

// This rank's share of `job`, replayed and gathered on rank 0 as encoded partials (none on the other
// ranks); with `to_every_rank`, rank 0 then sends the list to every rank. A failure on any rank
// aborts the job naming the rank.
std::vector<std::string> replay_and_gather(ProcessGroup& group, const ReplayJob& job, ReplayBackend resolved,
                                           const nlohmann::json& identity, bool to_every_rank) {
  const ShardSpec mine{group.rank(), group.size()};
  const size_t total = job.configs.size() * job.contexts.size();
  std::vector<std::string> gathered;
  try {
    const ReplaySlice slice = run_replay_units(job, mine, resolved);
    gathered = group.gather_to_root(encode_replay_partial(identity, mine, total, slice));
    if (to_every_rank) {
      std::string all;
      if (group.rank() == 0) all = pack(gathered);
      group.broadcast_from_root(all);
      gathered = unpack(all);
    }
  } catch (const std::exception& e) {
    group.abort(1, "ncclbot: rank " + std::to_string(group.rank()) + ": " + e.what());
  }
  return gathered;
}

// The ranks' partials (rank r's the r-th) merged in rank order.
ReplayResults merge_rank_partials(const std::vector<std::string>& bytes) {
  std::vector<ReplayPartial> parts;
  for (size_t r = 0; r < bytes.size(); ++r)
    parts.push_back(decode_replay_partial(bytes[r], "rank " + std::to_string(r)));
  return merge_replay_partials(parts);
}

}  // namespace

ReplayResults run_replay_on_ranks(ProcessGroup& group, const ReplayJob& job, ReplayBackend resolved,
                                  const nlohmann::json& identity) {
  return merge_rank_partials(replay_and_gather(group, job, resolved, identity, true));
}

std::optional<ReplayResults> gather_replay_on_ranks(ProcessGroup& group, const ReplayJob& job,
                                                    ReplayBackend resolved, const nlohmann::json& identity) {
  const std::vector<std::string> gathered = replay_and_gather(group, job, resolved, identity, false);
  if (group.rank() != 0) return std::nullopt;
  return merge_rank_partials(gathered);
}

}  // namespace ncclbot
