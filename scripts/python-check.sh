#!/usr/bin/env bash
# The Python package, as a user gets it: `pip install .` into a fresh virtual environment
# (build-python/venv), then its pytest suite (python/tests), which compares every call with the
# `ncclbot` program of the build folder. Run by scripts/test.sh after the main build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# The main build's compilers, and its library and command objects (NCCLBOT_PREBUILT): the package's
# build compiles only the module's own source and links the rest (CMakeLists.txt).
cached() { sed -n "s/^$1:[A-Z]*=//p" build/CMakeCache.txt 2>/dev/null; }
[ -f build/ncclbot-prebuilt-targets.cmake ] || { echo "python-check: build the default preset first (scripts/build.sh)" >&2; exit 1; }
[ -n "$(cached CMAKE_CXX_COMPILER)" ] && export CXX="$(cached CMAKE_CXX_COMPILER)"
[ -n "$(cached CMAKE_CUDA_COMPILER)" ] && export CUDACXX="$(cached CMAKE_CUDA_COMPILER)"
venv=build-python/venv
rm -rf "$venv"
"$PYTHON" -m venv "$venv"
# The venv's own pip (23.x from ensurepip) takes --config-settings; upgrading it cost a download.
"$venv/bin/python" -m pip install -q ".[test]" --config-settings=cmake.define.NCCLBOT_PREBUILT="$PWD/build"
cd build-python  # not the source tree, so `import ncclbot` is the installed package
NCCLBOT_CLI="$PWD/../build/ncclbot" "venv/bin/python" -m pytest -q -p no:cacheprovider ../python/tests
