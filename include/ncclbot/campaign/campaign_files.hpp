#pragma once
// The three files `ncclbot plan` writes into a campaign folder (docs/campaign.md):
//   campaign.toml  the manifest: [campaign] (the plan's settings) and one [[run]] per log
//   run.sh         runs every run whose log is missing or incomplete, in order (no Slurm needed)
//   run.sbatch     the Slurm job array: `bash run.sbatch` submits one array per node count
//   sweep.sh       from NCCL 2.31: the same arms timed by ncclbot-sweep (campaign/sweep_script.hpp),
//   sweep.sbatch   and its Slurm job array
//   tables/        one decision table per chunk size, loaded by ncclbot's tuner plugin
// Both scripts keep complete logs; an incomplete one is moved to logs/attempts/ before its rerun.
#include <string>
#include <utility>
#include <vector>

#include "ncclbot/campaign/plan.hpp"

namespace ncclbot::campaign {

std::string campaign_toml(const Plan& plan);
std::string run_sh(const Plan& plan);
std::string run_sbatch(const Plan& plan);
// (path relative to the folder, text) of each chunk size's decision table (knob_point.hpp).
std::vector<std::pair<std::string, std::string>> chunk_tables(const Plan& plan);

// Writes the three files and logs/ into `dir`, which must be new, empty, or this very campaign
// (never someone else's files); UsageError "--out ..." when it is not or cannot be written.
void write_campaign_folder(const std::string& dir, const Plan& plan);

// The logs of a run, relative to the campaign folder.
std::string json_log_path(const std::string& run_id);  // logs/ID.json
std::string text_log_path(const std::string& run_id);  // logs/ID.log

}  // namespace ncclbot::campaign
