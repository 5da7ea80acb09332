#!/usr/bin/env bash
# Fuzz smoke run: builds the libFuzzer targets with clang++ in their own build folder (build-fuzz)
# and runs each, two at a time: the nccl-tests log and sweep CSV readers for FUZZ_SECONDS (default
# 5), the tuner plugin's decision table, state file and leader wire protocol for
# PLUGIN_FUZZ_SECONDS (default 4), the study TOML loader, the `stats` JSON input, the fabric
# preset reader, the decision-log reader (checksums resealed) and study text on its way into
# report.html for FUZZ_INPUT_SECONDS (default 3). A smoke run within CI's time; set them higher
# for a longer search. Seed corpus: tests/data/nccl-tests,
# tests/fuzz/seeds and the third-party nccl-tests logs in $NCCLBOT_SHARED_DIR/data/nccl-tests (when
# present; not part of the repository). Exits non-zero on any crash, sanitizer report or unexpected
# exception; reproducers land in build-fuzz/fuzz-artifacts/.
# Needs clang++ and libFuzzer's runtime (Debian: clang, libclang-rt-14-dev; scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-5}
plugin_seconds=${PLUGIN_FUZZ_SECONDS:-4}
build=${FUZZ_BUILD_DIR:-build-fuzz}
# --build-only builds the targets and stops (scripts/test.sh runs it in the background while the
# Python and README checks wait on the network and the studies); --run-only runs what is built.
phase=${1:-all}
case "$phase" in
  all | --build-only | --run-only) ;;
  *) echo "usage: scripts/fuzz-smoke.sh [--build-only | --run-only]" >&2; exit 2 ;;
esac

if [ "$phase" != --run-only ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DNCCLBOT_FUZZ=ON -DNCCLBOT_BUILD_TESTS=OFF -DNCCLBOT_ENABLE_CUDA=OFF >/dev/null
  cmake --build "$build" --target fuzz_nccl_tests_log fuzz_sweep_csv fuzz_decision_table fuzz_state_file \
    fuzz_leader_wire fuzz_study_toml fuzz_stats_json fuzz_fabric_preset fuzz_decision_log fuzz_report_text \
    fuzz_sweep_side_data
fi
[ "$phase" != --build-only ] || exit 0

corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"
mkdir -p "$corpus/log" "$corpus/csv" "$artifacts"
shared=${NCCLBOT_SHARED_DIR:-../shared}
if [ -d "$shared/data/nccl-tests" ]; then cp "$shared"/data/nccl-tests/*.txt "$corpus/log/"; fi
cp tests/data/nccl-tests/*.txt tests/fuzz/seeds/*.json "$corpus/log/"
cp tests/fuzz/seeds/*.csv "$corpus/csv/"
mkdir -p "$corpus/table" "$corpus/state" "$corpus/wire"
cp tests/fuzz/seeds/plugin/table.csv tests/fuzz/seeds/plugin/nccl_example.conf "$corpus/table/"
cp tests/fuzz/seeds/plugin/*.state "$corpus/state/"
cp tests/fuzz/seeds/plugin/wire-*.bin "$corpus/wire/"
for kind in study stats fabric decision_log report_text side_data; do mkdir -p "$corpus/$kind"; cp tests/fuzz/seeds/$kind/* "$corpus/$kind/"; done

run() {
  local target=$1 dir=$2 secs=$3
  echo "fuzz-smoke: $target for ${secs}s on $dir" >&2
  "$build/tests/fuzz/$target" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$target-" "$dir" 2>"$build/$target.log" ||
    { tail -n 40 "$build/$target.log" >&2; echo "fuzz-smoke: $target FAILED" >&2; return 1; }
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$build/$target.log" | tail -n 2 >&2 || true
}
# Two lanes, one fuzzer at a time in each (one core each): the same fuzzing time in half the wall time.
input_seconds=${FUZZ_INPUT_SECONDS:-3}
(
  run fuzz_nccl_tests_log "$corpus/log" "$seconds" && run fuzz_decision_table "$corpus/table" "$plugin_seconds" &&
    run fuzz_state_file "$corpus/state" "$plugin_seconds" && run fuzz_study_toml "$corpus/study" "$input_seconds" &&
    run fuzz_report_text "$corpus/report_text" "$input_seconds" &&
    run fuzz_sweep_side_data "$corpus/side_data" "$input_seconds"
) &
lane1=$!
(
  run fuzz_sweep_csv "$corpus/csv" "$seconds" && run fuzz_leader_wire "$corpus/wire" "$plugin_seconds" &&
    run fuzz_stats_json "$corpus/stats" "$input_seconds" && run fuzz_fabric_preset "$corpus/fabric" "$input_seconds" &&
    run fuzz_decision_log "$corpus/decision_log" "$input_seconds"
) &
lane2=$!
failed=0
wait "$lane1" || failed=1
wait "$lane2" || failed=1
if ((failed)); then
  echo "fuzz-smoke: a fuzzer found a crash, a sanitizer report or an unexpected exception" >&2
  exit 1
fi
echo "fuzz-smoke: no crashes in the log, CSV, plugin, input and decision-log readers, no live markup in reports" >&2
