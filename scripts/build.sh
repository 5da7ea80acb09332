#!/usr/bin/env bash
# Configure and build with a CMake preset (default: `default`), after installing dependencies.
#   scripts/build.sh [PRESET [TARGET...]]   with TARGETs, only those and what they need
#                                           (scripts/main.sh builds `ncclbot` alone)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
shift || true
scripts/setup.sh
# NCCLBOT_GPU_TEST_PROGRAMS=ON|OFF (scripts/test.sh sets it): whether the GPU-only test programs build.
cmake --preset "$preset" ${NCCLBOT_GPU_TEST_PROGRAMS:+-DNCCLBOT_GPU_TEST_PROGRAMS=$NCCLBOT_GPU_TEST_PROGRAMS} >/dev/null
if (($#)); then
  cmake --build --preset "$preset" --target "$@"
else
  cmake --build --preset "$preset"
fi
