#pragma once
// `plan` as library calls (cli/replay_call.hpp has the pattern): a forced-arm nccl-tests campaign for
// a cluster written into a folder (campaign.toml, run.sh, run.sbatch, and sweep.sh where NCCL >= 2.31),
// with the arms NCCL can run there, the ones left out and why, and what it costs; and the state of
// each run of a campaign folder. Typed options in, typed results out, no printing.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/campaign/campaign.hpp"
#include "ncclbot/campaign/plan.hpp"

namespace ncclbot::cli {

// Each as the command line gives it ("2,4,8", "8G", "Ring/LL,NVLS", ...).
struct PlanCallOptions {
  std::string fabric, nodes, collectives = "allreduce,allgather,reducescatter", min_bytes = "8",
                             max_bytes = "8G", arms, launcher = "srun", out, channels = "0",
                             chunk_bytes = "0", nccl_version = "2.32";
  std::optional<int> gpus_per_node;  // nullopt: the preset's
  int iters = 50, warmup = 5;
  uint64_t step_factor = 2;
  double startup_s = 30.0;
};

struct PlanCallResult {
  campaign::Plan plan;
  std::string out;            // the campaign folder written
  size_t sweep_launches = 0;  // ncclbot-sweep launches written to sweep.sh (0: none)
};

// UsageError naming the option on a bad value; InputError on an unknown fabric.
PlanCallResult plan_call(const PlanCallOptions& options);
// The JSON document `plan --json` prints.
nlohmann::json plan_document(const PlanCallResult& result);

// One run (or one sweep.sh launch) of a campaign and its state.
struct PlanRunState {
  std::string id;  // the run's id, or the launch's name
  campaign::RunState state = campaign::RunState::kMissing;
  std::string reason;
};

struct PlanStatusResult {
  std::string dir;
  std::vector<PlanRunState> runs, sweeps;
  size_t done = 0, missing = 0, failed = 0;  // of the runs
};

// UsageError when `dir` holds no campaign.toml; InputError on a bad one.
PlanStatusResult plan_status_call(const std::string& dir);
// The JSON document `plan --status DIR --json` prints.
nlohmann::json plan_status_document(const PlanStatusResult& result);

}  // namespace ncclbot::cli
