#!/usr/bin/env bash
# The README's test command: set up, build, and run the whole suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default
ctest --preset default
