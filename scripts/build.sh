#!/usr/bin/env bash
# Configure and build with a CMake preset (default: `default`), after installing dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
scripts/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
