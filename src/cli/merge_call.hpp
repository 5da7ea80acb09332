#pragma once
// `merge` as a library call (cli/replay_call.hpp has the pattern): the partial results of
// `replay --shard I/N` or `tune --phase tune|score --shard I/N` (every shard exactly once, any order)
// combined into what the unsharded run gives (scale/replay_partial.hpp, scale/tune_shards.hpp,
// docs/scale-out.md); typed options in, the merged result out, no printing.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/replay_report.hpp"
#include "cli/tune_report.hpp"

namespace ncclbot::cli {

struct MergeCallOptions {
  std::vector<std::string> partials;
  std::string out_path;  // tune-phase partials only: where the choice file goes
};

// What was merged: replay partials into the replay's report, a tune phase into the choice file
// written to `out` (each policy's chosen point in `tuned`), a score phase into the tune's report.
struct MergeCallResult {
  enum class Kind { kReplay, kTuneChoice, kTuneScore } kind = Kind::kReplay;
  ReplayReport replay_report;
  ReplayResults replay_results;
  TuneReport tune_report;          // kTuneScore
  std::vector<TunedPolicy> tuned;  // kTuneChoice and kTuneScore
  std::string objective, out;      // kTuneChoice: the tune objective and the choice file
  size_t partials = 0;
};

// InputError naming the partial on an unreadable or malformed partial, or partials that do not
// make one whole run; UsageError on an --out that is not for a tune phase or names a partial.
MergeCallResult merge_call(const MergeCallOptions& options);

// The JSON document `merge --json` prints: the replay's or the tune's report, or the tune phase's
// choices.
nlohmann::json merge_document(const MergeCallResult& result);

// The human summary (stderr with `json`) and, with `json`, the document, as `merge` prints them.
void print_merge_result(const MergeCallResult& result, bool json);

}  // namespace ncclbot::cli
