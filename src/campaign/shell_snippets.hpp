#pragma once
// Shell text the campaign's scripts share (run.sh, run.sbatch, sweep.sh; docs/campaign.md).
#include <string>

namespace ncclbot::campaign {

// Every script first finds its own folder exactly, or stops: the script's real path with every
// symlink resolved (started through a link, the campaign is still where the file is; readlink -f is
// coreutils', on every Linux node), and no HERE that is empty, relative or spans lines.
constexpr const char* kLocateHere = R"SH(SELF="$(readlink -f -- "${BASH_SOURCE[0]}")" || SELF=""
HERE="$(dirname -- "$SELF")"
[[ -n "$SELF" && "$HERE" == /* && -d "$HERE" && "$HERE" != *$'\n'* ]] || { echo "${BASH_SOURCE[0]}: cannot locate its folder" >&2; exit 2; }
)SH";

// launch NODES COMMAND...: one process per GPU under the campaign's launcher ($LAUNCHER, with
// $GPUS_PER_NODE), the variables named in $RUN_VARS passed to every rank (mpirun's -x; srun
// exports the whole environment).
constexpr const char* kLaunchFunction =
    R"SH(launch() {  # NODES COMMAND...: one process per GPU, $RUN_VARS passed to every rank
  local nodes="$1" v
  local -a pass=()
  for v in ${RUN_VARS[@]+"${RUN_VARS[@]}"}; do pass+=(-x "$v"); done
  shift
  case "$LAUNCHER" in
    srun) ${SRUN:-srun} --nodes="$nodes" --ntasks-per-node="$GPUS_PER_NODE" --gpus-per-node="$GPUS_PER_NODE" \
            --export=ALL "$@" ;;
    mpirun) ${MPIRUN:-mpirun} -np $((nodes * GPUS_PER_NODE)) --map-by "ppr:$GPUS_PER_NODE:node" \
              ${pass[@]+"${pass[@]}"} "$@" ;;
  esac
}
)SH";

// A script's last lines: run_one over every index of the shell array `array`, counting failures;
// exit 1 when any failed, else `done` is echoed (shell text: it may name $HERE).
inline std::string run_every(const std::string& array, const std::string& script, const std::string& items,
                             const std::string& kept, const std::string& done) {
  return "failed=0\nfor i in \"${!" + array +
         "[@]}\"; do\n  run_one \"$i\" || failed=$((failed + 1))\ndone\n" +
         "if ((failed > 0)); then\n  echo \"$failed of ${#" + array + "[@]} " + items + " failed; " + script +
         " again retries them (complete " + kept + " are kept)\"\n  exit 1\nfi\necho \"all ${#" + array +
         "[@]} " + items + " complete" + done + "\"\n";
}

}  // namespace ncclbot::campaign
