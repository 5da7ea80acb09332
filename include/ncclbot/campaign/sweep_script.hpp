#pragma once
// sweep.sh, the campaign's ncclbot-sweep engine (NCCL >= 2.31, docs/campaign.md "Forced arms per
// call"): one launch of ncclbot-sweep per node count and collective, timing every planned arm of it
// (each algorithm x protocol x channel count the plan holds at NCCL's own chunk size) call by call in
// one process per GPU. Runs with a chunk size stay run.sh's (NCCL has no per-call chunk size).
#include <string>
#include <vector>

#include "ncclbot/campaign/campaign.hpp"
#include "ncclbot/campaign/plan.hpp"

namespace ncclbot::campaign {

struct SweepLaunch {
  int nodes = 0;
  Collective collective = Collective::kAllReduce;
  std::vector<uint64_t> sizes;
  std::vector<std::string> algos, protos;  // NCCL's names, in slot order
  std::vector<int> channels;               // 0: NCCL's own
  std::string name;                        // n2-allreduce: sweeps/NAME.csv
};

// The launches of `plan`, by node count then collective: none for NCCL before 2.31, or when it has no
// run at NCCL's own chunk size.
std::vector<SweepLaunch> sweep_launches(const Plan& plan);
// A launch's name: n2-allreduce.
std::string sweep_launch_name(int nodes, Collective collective);

// The script's text; empty when the plan is for NCCL before 2.31 or has no launch.
std::string sweep_sh(const Plan& plan);
// Its Slurm job array (one task per launch, by node count), or empty with sweep_sh().
std::string sweep_sbatch(const Plan& plan);

// The state of each launch of a campaign folder's sweep.sh, for `plan --status`: done (its
// sweeps/NAME.done), failed (a log but no marker: the launch ended badly or is still running),
// missing; none when the folder has no sweep.sh.
struct SweepLaunchStatus {
  std::string name;
  RunState state = RunState::kMissing;
  std::string reason;
};
std::vector<SweepLaunchStatus> sweep_status(const Campaign& campaign);

}  // namespace ncclbot::campaign
