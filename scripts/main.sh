#!/usr/bin/env bash
# The README's main command: installs what is missing, builds (scripts/build.sh default) and runs
# the default study, experiments/quick.toml, on the built-in simulated H100 sweep; ends by printing
# where the report is.
#   scripts/main.sh                        the quick study into out/quick (under a minute on 2 cores)
#   scripts/main.sh study STUDY.toml [DIR] another study (e.g. experiments/paper.toml) into DIR
#                                          (default out/<study file name>); rerun to resume
#   scripts/main.sh ingest [LOG... OPTS]   nccl-tests logs -> out/sweep.csv and its summary; with no
#                                          LOG, the forced-arm logs among the third-party
#                                          nccl-tests logs in $NCCLBOT_SHARED_DIR/data/nccl-tests
#                                          (beside the clone by default, not in the repository)
#                                          labelled by data/nccl-tests-forced.toml; arguments go to
#                                          `ncclbot ingest` as they are (--manifest, --fabric, ...)
#   scripts/main.sh LOG... [OPTS]          the same as `ingest LOG...`
set -euo pipefail
cd "$(dirname "$0")/.."
# The program and what it loads (the tuner plugin); scripts/test.sh builds the tests and the rest.
scripts/build.sh default ncclbot
bin=build/ncclbot
mkdir -p out

# The last line printed is ncclbot's "report: DIR/report.html" (report.md, results.json and
# figures/ are beside it).
run_study() {
  "$bin" run "$1" --out "$2"
}

ingest() {
  if (($#)); then
    "$bin" ingest "$@" --out out/sweep.csv
  else
    local shared=${NCCLBOT_SHARED_DIR:-../shared}
    if [[ ! -d "$shared/data/nccl-tests" ]]; then
      echo "scripts/main.sh ingest: no third-party nccl-tests logs in $shared/data/nccl-tests" \
        "(set NCCLBOT_SHARED_DIR, or name the logs: scripts/main.sh ingest LOG...)" >&2
      exit 2
    fi
    local manifest=data/nccl-tests-forced.toml
    local logs=()
    while IFS= read -r name; do
      logs+=("$shared/data/nccl-tests/$name")
    done < <(sed -n 's/^file = "\(.*\)"$/\1/p' "$manifest")
    "$bin" ingest --manifest "$manifest" "${logs[@]}" --out out/sweep.csv
  fi
  "$bin" inspect out/sweep.csv
  echo "sweep: out/sweep.csv"
}

case "${1:-}" in
  "") run_study experiments/quick.toml out/quick ;;
  study)
    [[ $# -ge 2 ]] || { echo "usage: scripts/main.sh study STUDY.toml [DIR]" >&2; exit 2; }
    name=$(basename "$2" .toml)
    run_study "$2" "${3:-out/$name}"
    ;;
  ingest) shift; ingest "$@" ;;
  *.toml) run_study "$1" "${2:-out/$(basename "$1" .toml)}" ;;
  *) ingest "$@" ;;  # scripts/main.sh LOG... [OPTIONS], as before: logs go to ingest
esac
