#!/usr/bin/env bash
# The GPU check of the CUDA backend, for one H200 (or any sm_90 device), in well under 8 minutes:
#   1. uses BUILD_DIR (default build-cuda) if it holds a CUDA build (made on a CPU machine with
#      sm_90 and carried over), else configures and builds one there;
#   2. runs the `gpu` tests (ctest -L gpu): cuRAND's device Philox against the host generator,
#      the CUDA engine bit-identical to the CPU engine, the command line;
#   3. runs compute-sanitizer (memcheck with leak check, racecheck) on a small replay of several
#      policies, with and without feedback delay;
#   4. benchmarks UCB1 on 12 arms on the CPU (all cores) and the GPU at three sizes and prints
#      steps/s, the GPU/CPU ratio and the fraction of the device's instruction-issue limit, from
#      the SASS instruction count per step in docs/cuda.md (override: NCCLBOT_SASS_PER_STEP); then
#      UCB1 and Thompson sampling at blocks of 32, 64, 96 and 128 threads (the threads per SM the
#      shared-memory state allows);
#   5. runs the JAX/CuPy peers (scripts/bench_peers_gpu.py) on the same device and prints them last.
# Usage: scripts/gpu-check.sh [BUILD_DIR]           the check; table on stdout, logs in BUILD_DIR/gpu-check/
#        scripts/gpu-check.sh --bundle [BUILD_DIR]  on the build machine: copy the shared libraries
#          `ncclbot` needs beyond glibc/libstdc++ (fmt, toml++, GLPK and theirs) into
#          BUILD_DIR/gpu-runtime/, which the check puts on LD_LIBRARY_PATH on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == --bundle ]]; then
  BUILD=${2:-build-cuda}
  mkdir -p "$BUILD/gpu-runtime"
  ldd "$BUILD/ncclbot" | awk '/=> \// {print $3}' |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so' |
    xargs -r -I{} cp -L {} "$BUILD/gpu-runtime/"
  ls "$BUILD/gpu-runtime" >&2
  exit 0
fi
BUILD=${1:-build-cuda}
LOG="$BUILD/gpu-check"
SASS_PER_STEP=${NCCLBOT_SASS_PER_STEP:-570}  # docs/cuda.md, "Instructions per step" (static estimate)
SECONDS=0
[[ -d "$BUILD/gpu-runtime" ]] && export LD_LIBRARY_PATH="$PWD/$BUILD/gpu-runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# A carried build folder is used as it is (its sources' copies look newer than its objects, so
# asking the build tool would rebuild everything); a missing binary means building here.
NEEDED=("$BUILD/ncclbot" "$BUILD/tests/gpu/gpu_curand_stream_test" "$BUILD/tests/gpu/gpu_cuda_engine_test")
for f in "${NEEDED[@]}"; do
  if [[ ! -x "$f" ]]; then
    echo "gpu-check: $f missing; building $BUILD (CUDA, sm_90)" >&2
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
    cmake --build "$BUILD" -j "$(nproc)" --target ncclbot gpu_curand_stream_test gpu_cuda_engine_test >/dev/null
    break
  fi
done
mkdir -p "$LOG"

nvidia-smi --query-gpu=name,multiprocessor_count,clocks.max.sm,driver_version --format=csv,noheader \
  >"$LOG/device.txt" 2>/dev/null || echo "unknown" >"$LOG/device.txt"
echo "device: $(head -1 "$LOG/device.txt")" >&2
echo "ldd ncclbot (no CUDA .so expected):" >&2
ldd "$BUILD/ncclbot" | tee "$LOG/ldd.txt" >&2
if grep -qE "libcuda(rt|rand)?\.so" "$LOG/ldd.txt"; then echo "gpu-check: ncclbot links a CUDA .so" >&2; fi

echo "== ctest -L gpu" >&2
if ! ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 240 >"$LOG/ctest.txt" 2>&1; then
  tail -40 "$LOG/ctest.txt" >&2
  echo "gpu-check: gpu tests FAILED (log: $LOG/ctest.txt)" >&2
  TESTS=failed
else
  TESTS=passed
fi
grep -E "tests passed|Skipped|Not Run" "$LOG/ctest.txt" >&2 || true
# A skipped gpu test means the probe found no usable device: on the GPU machine that is a failure.
if [[ "$TESTS" == passed ]] && grep -q "Skipped" "$LOG/ctest.txt" && [[ "${NCCLBOT_GPU_CHECK_DRY:-0}" != 1 ]]; then
  echo "gpu-check: gpu tests were skipped: no usable CUDA device" >&2
  TESTS=skipped
fi

# compute-sanitizer on a small run of several policies (memcheck with leaks, then racecheck).
SANITIZER=skipped
if command -v compute-sanitizer >/dev/null 2>&1 && [[ "${NCCLBOT_GPU_CHECK_DRY:-0}" != 1 ]]; then
  SANITIZER=clean
  for delay in 0 5; do
    small=("$BUILD/ncclbot" bench --backend cuda --policy ucb1 --policy thompson --policy "swucb:window=8"
      --policy "ducb:gamma=0.9" --arms 12 --contexts 24 --seeds 2 --horizon 64 --delay "$delay" --repetitions 1)
    for tool in "memcheck --leak-check full" racecheck; do
      # shellcheck disable=SC2086
      if ! timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 "${small[@]}" \
        >"$LOG/sanitizer-${tool%% *}-$delay.txt" 2>&1; then
        SANITIZER="FAILED (${tool%% *}, delay $delay: $LOG/sanitizer-${tool%% *}-$delay.txt)"
        tail -20 "$LOG/sanitizer-${tool%% *}-$delay.txt" >&2
      fi
    done
  done
fi
echo "compute-sanitizer: $SANITIZER" >&2

# Three sizes of the same workload: 480 contexts of 12 arms, horizon 4096, 8 / 128 / 1024 seeds.
# NCCLBOT_GPU_CHECK_SEEDS and _HORIZON shrink it; NCCLBOT_GPU_CHECK_DRY=1 times the CPU in place of
# the GPU (a smoke test of this script on a machine without one).
SIZES=(${NCCLBOT_GPU_CHECK_SEEDS:-8 128 1024})
HORIZON=${NCCLBOT_GPU_CHECK_HORIZON:-4096}
GPU_BACKEND=cuda
[[ "${NCCLBOT_GPU_CHECK_DRY:-0}" == 1 ]] && GPU_BACKEND=cpu
bench() {  # backend seeds -> JSON on stdout
  local threads=()
  [[ "$1" == cpu ]] && threads=(--threads "$(nproc)")
  "$BUILD/ncclbot" bench --backend "$1" --policy ucb1 --arms 12 --contexts 480 --seeds "$2" --horizon "$HORIZON" \
    --repetitions 3 "${threads[@]}" --json 2>>"$LOG/bench.err"
}
for seeds in "${SIZES[@]}"; do
  bench cpu "$seeds" >"$LOG/cpu-$seeds.json"
  if ! bench "$GPU_BACKEND" "$seeds" >"$LOG/cuda-$seeds.json"; then
    echo "gpu-check: ncclbot bench --backend cuda failed: $(tail -1 "$LOG/bench.err")" >&2
    exit 1
  fi
done

# The kernels' block size (docs/cuda.md "Per-thread state": the state lives in shared memory, so
# the block sets the threads per SM): UCB1 and Thompson sampling at the largest size, 32 to 128.
BLOCKS="not timed (dry run)"
if [[ "$GPU_BACKEND" == cuda ]]; then
  if "$BUILD/ncclbot" bench --backend cuda --policy ucb1 --policy thompson --arms 12 --contexts 480 \
    --seeds "${SIZES[-1]}" --horizon "$HORIZON" --repetitions 3 --cuda-block 32 64 96 128 --json \
    >"$LOG/blocks.json" 2>>"$LOG/bench.err"; then
    BLOCKS=$(python3 - "$LOG/blocks.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print("; ".join(f"{r['policy'].split(':')[0]} block {r['block_requested']}: {r['steps_per_s']:.3g}" for r in rows))
PY
)
  else
    BLOCKS="FAILED: $(tail -1 "$LOG/bench.err")"
  fi
fi

# Measured instructions per step, where Nsight Compute is installed: warp instructions executed
# by one replay launch x 32 / its steps (480 contexts x 8 seeds x 1024 steps).
PER_STEP_SOURCE="static SASS estimate"
if command -v ncu >/dev/null 2>&1; then
  if timeout 120 ncu --kernel-name regex:replay_kernel --launch-count 1 --metrics smsp__inst_executed.sum --csv \
    --log-file "$LOG/ncu.csv" "$BUILD/ncclbot" bench --backend cuda --policy ucb1 --arms 12 --contexts 480 \
    --seeds 8 --horizon 1024 --repetitions 1 >/dev/null 2>"$LOG/ncu.err"; then
    measured=$(python3 -c '
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r and "smsp__inst_executed.sum" in r]
print(float(rows[-1][-1].replace(",", "")) * 32 / (480 * 8 * 1024))' "$LOG/ncu.csv" 2>/dev/null || true)
    if [[ -n "$measured" ]]; then SASS_PER_STEP=$measured; PER_STEP_SOURCE="measured by ncu"; fi
  fi
fi

python3 - "$LOG" "$SASS_PER_STEP" "$TESTS" "$PER_STEP_SOURCE" "$HORIZON" "${SIZES[@]}" <<'PY'
import json, sys
log, per_step, tests, source = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
horizon, sizes = int(sys.argv[5]), [int(x) for x in sys.argv[6:]]
name, sms, mhz = "H200", 132, 1980.0
try:
    f = [x.strip() for x in open(f"{log}/device.txt").read().split(",")]
    name, sms, mhz = f[0], int(f[1]), float(f[2].split()[0])
except Exception:
    pass
# Issue limit: SMs x 4 schedulers x 1 warp-instruction per clock x 32 threads, at the max SM clock.
limit = sms * 4 * mhz * 1e6 * 32 / per_step
print(f"device {name}: {sms} SMs at {mhz:.0f} MHz; {per_step:.0f} instructions per UCB1 step ({source}) "
      f"-> issue limit {limit:.3g} steps/s; gpu tests {tests}")
print(f"{'seeds':>6} {'steps':>12} {'CPU steps/s':>13} {'GPU steps/s':>13} {'GPU/CPU':>8} {'of limit':>9}")
for seeds in sizes:
    cpu = json.load(open(f"{log}/cpu-{seeds}.json"))["results"][0]["steps_per_s"]
    gpu = json.load(open(f"{log}/cuda-{seeds}.json"))["results"][0]["steps_per_s"]
    steps = 480 * seeds * horizon
    print(f"{seeds:>6} {steps:>12.3g} {cpu:>13.3g} {gpu:>13.3g} {gpu / cpu:>8.1f} {gpu / limit:>9.1%}")
PY
echo "steps/s by block size (${SIZES[-1]} seeds): $BLOCKS"
echo "compute-sanitizer: $SANITIZER"
# The JAX / CuPy peers of the same replay on the same device (docs/cuda.md), last.
if [[ "${NCCLBOT_GPU_CHECK_DRY:-0}" != 1 ]]; then
  timeout 300 python3 scripts/bench_peers_gpu.py --ncclbot "$BUILD/ncclbot" 2>"$LOG/peers.err" || tail -5 "$LOG/peers.err" >&2
fi
echo "gpu-check: done in ${SECONDS}s (logs in $LOG)" >&2
[[ "$TESTS" == passed && "$SANITIZER" != FAILED* ]]
