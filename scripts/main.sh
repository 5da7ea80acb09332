#!/usr/bin/env bash
# The README's main command: installs what is missing and builds (scripts/build.sh default), turns
# nccl-tests logs into a forced-arm sweep (out/sweep.csv) and prints its summary.
#   scripts/main.sh                  the forced-arm logs of ../shared/data/nccl-tests, labelled by
#                                    data/nccl-tests-forced.toml
#   scripts/main.sh LOG... [OPTIONS] your logs; arguments go to `ncclbot ingest` as they are
#                                    (e.g. --manifest RUNS.toml --placement both --fabric NAME)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default
bin=build/ncclbot
mkdir -p out

if (($#)); then
  "$bin" ingest "$@" --out out/sweep.csv
else
  shared=${NCCLBOT_SHARED_DIR:-../shared}
  manifest=data/nccl-tests-forced.toml
  logs=()
  while IFS= read -r name; do
    logs+=("$shared/data/nccl-tests/$name")
  done < <(sed -n 's/^file = "\(.*\)"$/\1/p' "$manifest")
  "$bin" ingest --manifest "$manifest" "${logs[@]}" --out out/sweep.csv
fi
"$bin" inspect out/sweep.csv
