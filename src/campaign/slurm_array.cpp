#include "campaign/slurm_array.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "campaign/shell_snippets.hpp"

namespace ncclbot::campaign {

std::string slurm_time(double seconds) {
  const long s = long(std::ceil(seconds * 2.0 + 600.0));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

std::string slurm_array_script(const Plan& plan, const SlurmArray& a) {
  std::ostringstream os;
  os << "#!/usr/bin/env bash\n# Slurm job array of this campaign, written by `ncclbot plan` "
        "(docs/campaign.md): one "
        "array task\n# per "
     << a.tasks << ", each running " << a.script << " --task INDEX inside its allocation.\n#   bash "
     << a.self << "   submits one array per node count, holding only the " << a.items
     << "s not yet complete;\n#" << std::string(a.self.size() + 11, ' ')  // under "submits"
     << "run it again after a preemption or a failure to resume.\n"
     << "# Extra sbatch options (account, partition, QOS) go in $SBATCH, e.g. SBATCH=\"sbatch -A proj -p "
        "gpu\".\n"
     << "#SBATCH --job-name=" << a.job_name << "\n#SBATCH --ntasks-per-node=" << plan.gpus_per_node
     << "\n#SBATCH --gpus-per-node=" << plan.gpus_per_node
     << "\n#SBATCH --exclusive\n#SBATCH --output=" << a.output_dir << "/slurm-%A_%a.out\n";
  os << "set -uo pipefail\nif [[ -n \"${SLURM_ARRAY_TASK_ID:-}\" ]]; then\n"
     << "  # Inside the allocation: sbatch runs a copy of this file from its spool, in --chdir (the "
        "campaign).\n"
     << "  exec bash \"$PWD/" << a.script << "\" --task \"$SLURM_ARRAY_TASK_ID\"\nfi\n"
     << kLocateHere << a.before << "mkdir -p \"$HERE/" << a.output_dir << "\"\n"
     << "submit() {  # NODES TIME\n  local list\n  list=\"$(bash \"$HERE/" << a.script
     << "\" --incomplete \"$1\" | paste -sd, -)\"\n  if [[ -z \"$list\" ]]; then\n    echo \"nodes=$1: every "
     << a.items << " complete\"\n    return 0\n  fi\n  echo \"nodes=$1: submitting array tasks $list\"\n"
     << "  ${SBATCH:-sbatch} --chdir=\"$HERE\" --nodes=\"$1\" --time=\"$2\" --array=\"$list\" \"$HERE/"
     << a.self << "\"\n}\n";
  for (const auto& [nodes, seconds] : a.seconds)
    os << "submit " << nodes << ' ' << slurm_time(seconds) << "\n";
  return os.str();
}

}  // namespace ncclbot::campaign
