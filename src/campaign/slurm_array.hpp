#pragma once
// A campaign script's Slurm job array (run.sbatch for run.sh, sweep.sbatch for sweep.sh;
// docs/campaign.md): `bash FILE` submits one array per node count holding only the tasks SCRIPT
// --incomplete NODES lists, each task running SCRIPT --task INDEX inside its allocation.
#include <map>
#include <string>

#include "ncclbot/campaign/plan.hpp"

namespace ncclbot::campaign {

struct SlurmArray {
  std::string script;             // run.sh: what each task runs
  std::string self;               // run.sbatch: this file's name
  std::string job_name;           // #SBATCH --job-name
  std::string tasks;              // "(nodes, collective, arm)": what one task is, for the header
  std::string items;              // "run": "every run complete"
  std::string output_dir;         // logs: where Slurm's own output goes, created before submitting
  std::string before;             // shell lines run before submitting (run.sh's --check-env), or empty
  std::map<int, double> seconds;  // per node count: the longest task's predicted wall time
};

// Slurm's --time for a task predicted at `seconds`: twice it, plus ten minutes for the launcher.
std::string slurm_time(double seconds);

std::string slurm_array_script(const Plan& plan, const SlurmArray& a);

}  // namespace ncclbot::campaign
