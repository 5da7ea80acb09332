#pragma once
// `merge` of the partials of `tune` split over separate processes: the library merges them
// (scale/tune_shards.hpp, docs/scale-out.md) and this prints what the command prints.
#include <string>
#include <vector>

#include "ncclbot/scale/replay_partial.hpp"

namespace ncclbot::cli {

// `merge` of tune partials: the tune phase writes the choice file to `out_path` (required) and
// prints each policy's chosen point; the score phase prints the tune report. Returns the exit code.
int merge_tune_partials(const std::vector<ReplayPartial>& parts, const std::string& out_path, bool json);

}  // namespace ncclbot::cli
