#!/usr/bin/env bash
# Installs what ncclbot needs on a fresh Debian machine, idempotently: only missing Debian packages
# are installed (one `apt-get update` first, only then), and only missing Python modules via pip.
set -euo pipefail

APT_PACKAGES=(cmake ninja-build g++ clang pkg-config libgtest-dev libcli11-dev nlohmann-json3-dev
  libtomlplusplus-dev libfmt-dev libboost-dev librandom123-dev libglpk-dev libclang-rt-14-dev libopenmpi-dev libsodium-dev
  libmd4c-dev libmd4c-html0-dev ccache openmpi-bin)
PIP_MODULES=(numpy scipy statsmodels matplotlib)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
# The Python package is tested in a fresh virtual environment (scripts/python-check.sh).
if ! "$PYTHON" -c "import ensurepip, venv" 2>/dev/null; then
  echo "setup: installing python3-venv" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
fi
pip_missing=()
for m in "${PIP_MODULES[@]}"; do
  "$PYTHON" -c "import $m" 2>/dev/null || pip_missing+=("$m")
done
if ((${#pip_missing[@]})); then
  echo "setup: installing Python modules: ${pip_missing[*]}" >&2
  "$PYTHON" -m pip install -q "${pip_missing[@]}"
fi
# NCCL >= 2.31's nccl.h and libnccl.so.2 for ncclbot-sweep (tools/ncclbot_sweep/CMakeLists.txt finds
# them through this module); the CUDA toolkit ships no NCCL. About 350 MB, once.
NCCL_WHEEL="nvidia-nccl-cu13>=2.31,<3"
if ! "$PYTHON" -c "import importlib.metadata as m, sys; v = m.version('nvidia-nccl-cu13').split('.')
sys.exit(0 if (int(v[0]), int(v[1])) >= (2, 31) else 1)" 2>/dev/null; then
  echo "setup: installing Python module: $NCCL_WHEEL" >&2
  "$PYTHON" -m pip install -q "$NCCL_WHEEL"
fi
