#!/usr/bin/env bash
# The README's test command: set up, build, and run the whole suite (GPU tests skip without a GPU),
# then a short libFuzzer smoke run of every fuzz target (clang build in build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default
ctest --preset default
scripts/fuzz-smoke.sh
