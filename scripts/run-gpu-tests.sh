#!/usr/bin/env bash
# Runs every GPU test program of a GPU bundle (scripts/gpu-bundle.sh copies this file into the
# bundle as run-gpu-tests.sh), each with --gtest_output=json:OUT_DIR/PROGRAM.json and its output
# on stdout. No ctest and no path of the machine that built the bundle: the programs sit in bin/
# beside ncclbot and their libraries, all found from this script's folder.
# Usage: run-gpu-tests.sh OUT_DIR [SECONDS]
#   SECONDS (default 150) is for all programs together: each gets what is left, and they run
#   smallest first, so one that runs out of time cannot keep the others from reporting.
# Exit: 0 every program exited 0 (a test that skips counts as passed here: scripts/gpu-check.sh
#   reads why from the reports); 1 one failed, crashed or ran out of time, or none was found;
#   2 bad usage.
set -uo pipefail

usage() {
  echo "run-gpu-tests: $1 (usage: run-gpu-tests.sh OUT_DIR [SECONDS])" >&2
  exit 2
}
[[ $# -ge 1 && $# -le 2 ]] || usage "expected OUT_DIR and at most SECONDS"
out=$1
budget=${2:-150}
[[ "$budget" =~ ^[1-9][0-9]*$ ]] || usage "SECONDS must be a positive whole number, not '$budget'"
mkdir -p "$out" 2>/dev/null || usage "cannot create $out"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The tests run this ncclbot (tests/support/ncclbot_binary.hpp would also find it beside them).
export NCCLBOT_BINARY="$here/bin/ncclbot"
mapfile -t programs < <(ls -1Sr "$here"/bin/gpu_*_test 2>/dev/null)
if ((${#programs[@]} == 0)); then
  echo "run-gpu-tests: no gpu_*_test program in $here/bin" >&2
  exit 1
fi

deadline=$((SECONDS + budget))
status=0
for program in "${programs[@]}"; do
  name=$(basename "$program")
  left=$((deadline - SECONDS))
  if ((left < 1)); then
    echo "== $name: not run, no time left"
    status=1
    continue
  fi
  echo "== $name (at most ${left}s)"
  start=$SECONDS
  timeout -k 5 "$left" "$program" --gtest_output="json:$out/$name.json"
  rc=$?
  case $rc in
    0) verdict="passed" ;;
    124 | 137) verdict="TIMED OUT" ;;
    *) verdict="FAILED (exit $rc)" ;;
  esac
  echo "== $name: $verdict in $((SECONDS - start))s"
  ((rc == 0)) || status=1
done
exit $status
