#!/usr/bin/env bash
# The README's test command: set up, build, and run the whole suite (GPU tests skip without a GPU),
# then the Python package (scripts/python-check.sh: pip install . into a fresh venv, its pytest
# suite), then every command block of README.md (scripts/readme_check.py), then a short libFuzzer
# smoke run of every fuzz target (clang build in build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default
ctest --preset default
scripts/python-check.sh
# The README check must catch a drifted file before its word on README.md counts.
drifted=$(python3 scripts/readme_check.py --readme tests/data/docs/drifted_readme.md 2>&1 || true)
if ! grep -qx "readme: 1 passed, 4 failed" <<<"$drifted"; then
  echo "scripts/readme_check.py did not catch tests/data/docs/drifted_readme.md:" >&2
  echo "$drifted" >&2
  exit 1
fi
python3 scripts/readme_check.py
scripts/fuzz-smoke.sh
