#pragma once
// `ingest` as a library call (cli/replay_call.hpp has the pattern): nccl-tests logs (text or -J JSON)
// into a forced-arm sweep written to a CSV, or a campaign folder written by `plan` (its
// campaign.toml); typed options in, the sweep and what was found, used and skipped out. Warnings go
// to command_err() as they come.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/campaign/campaign.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"

namespace ncclbot::cli {

struct IngestCallOptions {
  std::vector<std::string> logs;  // logs, or one campaign folder; empty: the manifest's files
  std::string manifest;           // TOML list of [[run]] tables, or none
  std::string out;                // the sweep CSV; a campaign folder's default: DIR/sweep.csv
  std::string placement = "out", fabric = "unknown", samples = "auto";
  bool skip_unforced = false, skip_failed = false, allow_missing = false;
};

// A campaign run that is not done, and why.
struct IngestRunState {
  std::string id;
  campaign::RunState state = campaign::RunState::kMissing;
  std::string reason;
};

// A campaign folder's runs by state, the ones not done, and the contexts dropped (--allow-missing).
struct IngestCampaignSummary {
  std::string dir;
  size_t runs = 0, done = 0, missing = 0, failed = 0;
  std::vector<IngestRunState> not_done;
  std::vector<std::string> dropped;
};

struct IngestCallResult {
  nccl_tests::IngestResult result;
  std::string out;    // the sweep CSV written
  std::string noise;  // the per-iteration spread beside it (-I 1 columns), or empty
  size_t files = 0;   // log files read
  std::optional<IngestCampaignSummary> campaign;  // a campaign folder
};

// UsageError on a bad option; InputError naming file:line on a log or manifest a person must fix.
IngestCallResult ingest_call(const IngestCallOptions& options);

// The JSON document `ingest --json` prints.
nlohmann::json ingest_document(const IngestCallResult& result);

}  // namespace ncclbot::cli
