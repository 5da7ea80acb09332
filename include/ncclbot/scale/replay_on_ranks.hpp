#pragma once
// One replay job split over the ranks of a process group, with the results on every rank: rank r
// replays shard r/N of the units (scale/shard.hpp), rank 0 gathers the partials, and every rank
// merges the same bytes, so all ranks hold results bit-identical to run_replay(job) (seed means,
// and per-seed losses when job.keep_per_seed). `tune` needs this: its second phase depends on the
// first phase's choice, which every rank must make alike. `replay` prints its report on rank 0
// only, so there only rank 0 merges (gather_replay_on_ranks).
#include <nlohmann/json.hpp>
#include <optional>

#include "ncclbot/replay/backend.hpp"
#include "ncclbot/scale/process_group.hpp"

namespace ncclbot {

// `identity` goes into every partial (replay_identity()); rank 0 rejects a rank whose identity
// differs (another sweep file on that node, another program version). A failure on any rank
// aborts the job with a message naming the rank.
ReplayResults run_replay_on_ranks(ProcessGroup& group, const ReplayJob& job, ReplayBackend resolved,
                                  const nlohmann::json& identity);

// The same split with the results on rank 0 only: rank 0 gathers the partials and merges them in
// rank order (merge_replay_partials); the other ranks get nullopt. A failure on any rank up to
// the gather aborts the job with a message naming the rank; a partial that rank 0 cannot decode
// or merge throws there, naming "rank K".
std::optional<ReplayResults> gather_replay_on_ranks(ProcessGroup& group, const ReplayJob& job,
                                                    ReplayBackend resolved, const nlohmann::json& identity);

}  // namespace ncclbot
