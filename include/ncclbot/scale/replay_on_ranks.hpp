#pragma once
// One replay job split over the ranks of a process group, with the results on every rank: rank r
// replays shard r/N of the units (scale/shard.hpp), rank 0 gathers the partials, and every rank
// merges the same bytes, so all ranks hold results bit-identical to run_replay(job) (seed means,
// and per-seed losses when job.keep_per_seed). `tune` needs this: its second phase depends on the
// first phase's choice, which every rank must make alike.
#include <nlohmann/json.hpp>

#include "ncclbot/replay/backend.hpp"
#include "ncclbot/scale/process_group.hpp"

namespace ncclbot {

// `identity` goes into every partial (replay_identity()); rank 0 rejects a rank whose identity
// differs (another sweep file on that node, another program version). A failure on any rank
// aborts the job with a message naming the rank.
ReplayResults run_replay_on_ranks(ProcessGroup& group, const ReplayJob& job, ReplayBackend resolved,
                                  const nlohmann::json& identity);

}  // namespace ncclbot
