#pragma once
// A campaign folder as `ncclbot plan` wrote it and nccl-tests filled it: its manifest
// (campaign.toml), the state of every run (done, missing, failed, with the reason) and the sweep
// its complete runs give (one sample per timed iteration, the cost model's prior attached).
#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/campaign/knob_point.hpp"
#include "ncclbot/core/collective.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "ncclbot/io/nccl_tests/manifest.hpp"

namespace ncclbot::campaign {

inline constexpr const char* kManifestName = "campaign.toml";

struct CampaignRun {
  long line = 0;  // the [[run]] table in campaign.toml
  std::string id;
  std::string json, log;  // resolved paths
  int nodes = 0, gpus_per_node = 0;
  Collective collective = Collective::kAllReduce;
  int slot = 0;
  KnobPoint knobs;              // `channels`, `chunk_bytes` (0 or absent: NCCL's own)
  std::vector<uint64_t> sizes;  // what the run must print: min_bytes x step_factor^k <= max_bytes
};

struct Campaign {
  std::string dir, manifest_path;
  std::string fabric;
  int gpus_per_node = 0;
  std::vector<int> nodes;
  std::vector<Collective> collectives;
  int iters = 0, warmup = 0;
  uint64_t min_bytes = 0, max_bytes = 0, step_factor = 0;
  std::vector<int> channels = {0};  // the knob points' values; absent: NCCL's own only
  std::vector<uint64_t> chunk_bytes = {0};
  std::string nccl_version;  // MAJOR.MINOR the campaign was written for; empty: not said (before 2.31)
  std::vector<CampaignRun> runs;
  nccl_tests::Manifest manifest;  // the same file as an ingest manifest
};

// True when `dir` is a folder holding campaign.toml.
bool is_campaign_dir(const std::string& dir);
Campaign read_campaign(const std::string& dir);  // InputError naming campaign.toml:LINE

enum class RunState { kDone, kMissing, kFailed };
std::string_view run_state_name(RunState s);  // "done" | "missing" | "failed"

struct RunStatus {
  RunState state = RunState::kMissing;
  std::string reason;  // empty when done
};

// Reads the run's logs: done when both are complete, carry every planned size with `iters`
// per-iteration times, report no wrong results and ran the planned arm, knob point and shape
// (the environment the JSON recorded; the channels NCCL's INIT line says it set up, where the log
// has it), with no NCCL_CHUNK_SIZE set.
RunStatus run_status(const Campaign& campaign, const CampaignRun& run);

struct CampaignIngest {
  nccl_tests::IngestResult result;
  std::vector<RunStatus> status;     // per campaign run, in order
  std::vector<std::string> dropped;  // contexts left out for lack of arms (--allow-missing)
};

// The sweep of the complete runs. A context that lacks a planned arm (its run missing or failed)
// is an InputError unless `allow_missing`, which keeps only complete contexts.
CampaignIngest ingest_campaign(const Campaign& campaign, nccl_tests::IngestOptions options,
                               bool allow_missing,
                               const std::function<void(size_t done, size_t total)>& progress = {});

}  // namespace ncclbot::campaign
