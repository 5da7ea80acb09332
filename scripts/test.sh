#!/usr/bin/env bash
# The README's test command: set up, build, and run the whole suite (GPU tests skip without a GPU),
# then the Python package (scripts/python-check.sh: pip install . into a fresh venv, its pytest
# suite), then every command block of README.md and docs/usage.md (scripts/readme_check.py), then a
# short libFuzzer smoke run of every fuzz target (clang build in build-fuzz, begun in the background
# with ctest). Each stage's wall time is printed as it ends, so a slow CI run says where its
# time went.
set -euo pipefail
cd "$(dirname "$0")/.."
stage_start=$SECONDS
stage_done() {
  echo "test.sh: $1 in $((SECONDS - stage_start)) s (total $SECONDS s)" >&2
  stage_start=$SECONDS
}
# The test programs of label `gpu` only skip without a usable GPU: built only where one may run them
# (scripts/gpu-bundle.sh builds them for a GPU machine).
if nvidia-smi -L >/dev/null 2>&1; then
  export NCCLBOT_GPU_TEST_PROGRAMS=ON
else
  export NCCLBOT_GPU_TEST_PROGRAMS=OFF
  echo "test.sh: no GPU here: the GPU-only test programs (ctest label gpu) are not built" >&2
fi
scripts/build.sh default
stage_done "set-up and build"
# The fuzz targets build (clang, ASan) in the background, at low priority, from the start of ctest:
# in the gaps its tests leave (processes waiting on each other, timeouts), while the Python check
# waits on pip's downloads and while the README check runs its studies; their run comes last.
mkdir -p build-fuzz
nice -n 10 scripts/fuzz-smoke.sh --build-only >build-fuzz/build.log 2>&1 &
fuzz_build=$!
ctest --preset default
stage_done "ctest"
scripts/python-check.sh
stage_done "Python package"
# The README check must catch a drifted file before its word on README.md counts.
drifted=$(python3 scripts/readme_check.py --readme tests/data/docs/drifted_readme.md 2>&1 || true)
if ! grep -qx "readme: 1 passed, 4 failed" <<<"$drifted"; then
  echo "scripts/readme_check.py did not catch tests/data/docs/drifted_readme.md:" >&2
  echo "$drifted" >&2
  exit 1
fi
python3 scripts/readme_check.py
python3 scripts/readme_check.py --readme docs/usage.md  # the commands' examples, moved out of the README
stage_done "README check"
if ! wait "$fuzz_build"; then
  tail -n 40 build-fuzz/build.log >&2
  echo "test.sh: the fuzz targets did not build (build-fuzz/build.log)" >&2
  exit 1
fi
stage_done "fuzz build (the rest of it, begun with ctest)"
scripts/fuzz-smoke.sh --run-only
stage_done "fuzz smoke"
