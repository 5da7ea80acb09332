#!/usr/bin/env bash
# The GPU check of the CUDA backend on one sm_90 device (an H200), from a bundle that
# scripts/gpu-bundle.sh built on a CPU machine: nothing is built here. Four stages, every step under
# its own `timeout` (467 s if all ran to their limits), all within NCCLBOT_GPU_CHECK_BUDGET_S seconds
# of wall time (default 470, under the 8 minutes a device run is planned for; docs/cuda.md
# "Running the GPU check"):
#   1. the bundle's libraries (ldd), the device (nvidia-smi; its SMs from the program, which probes
#      it with a tiny replay), the gpu tests (the bundle's run-gpu-tests.sh, one JSON report per
#      program) and a short ncclbot-sweep where the bundle has it and the machine an NCCL 2.31+. No
#      test found, a failed test or a test skipped for want of a device fails the check; the MPI
#      tests' skips (no mpirun on the GPU machine) do not;
#   2. benchmarks: UCB1 on 12 arms, 480 contexts, horizon 4096, on the CPU (all cores) and the GPU
#      at 8, 128 and 1024 seeds; UCB1 and Thompson sampling at blocks of 32, 64, 96 and 128 threads
#      (128 seeds); a block of 1,024 asked of the delayed random and UCB1 kernels (the engine cuts
#      it to what each kernel's registers allow); experiments/quick.toml with 200,000 bootstrap
#      resamples on the CPU and on the GPU (its intervals are bootstrapped on the device): times,
#      and results.json identical but for the backend;
#   3. compute-sanitizer memcheck (with leak check) and racecheck on one small run each, and Nsight
#      Compute's count of instructions per UCB1 step (with --clock-control none);
#   4. the JAX / CuPy peers of the same replay (scripts/bench_peers_gpu.py).
# No step changes the device's clocks or settings: nvidia-smi only queries, ncu runs with
# --clock-control none (its default would lock the clocks to base), nothing else touches them.
# No library path is set either: the bundle's programs find their libraries by RPATH.
#
# Output, into OUT (--out DIR, else $OUT, else ./gpu-check-out), written as the check goes, so a
# run cut short still returns what it did: stage1.log .. stage4.log (every step's command, output
# and exit code), summary.json (rewritten after every step: the device, each step's status, time
# and JSON output), tests.json (the gpu tests' reports, merged and judged), summary.txt (the table,
# which also prints last on stdout). Seven files, no folders (the limit is 8).
#
# Usage: scripts/gpu-check.sh [--out DIR] [--stages 1,2,3,4] [--dry] BUNDLE
#   --stages  run only these (the device facts of stage 1 always run: the others need them)
#   --dry     this script's own smoke test on a machine without a GPU: stage 2 runs on the CPU at
#             tiny sizes in place of the GPU; stages 3 and 4 do not run
# Exit: 0 every stage run passed; 1 a check failed; 2 bad input; 3 no usable CUDA device.
set -uo pipefail

SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
  echo "gpu-check: $1 (usage: scripts/gpu-check.sh [--out DIR] [--stages 1,2,3,4] [--dry] BUNDLE)" >&2
  exit 2
}
OUT_DIR=${OUT:-}
STAGES="1,2,3,4"
DRY=0
BUNDLE=""
while (($#)); do
  case $1 in
    --out)
      [[ $# -ge 2 && -n "$2" ]] || usage "--out needs a folder"
      OUT_DIR=$2
      shift 2
      ;;
    --stages)
      [[ $# -ge 2 && "$2" =~ ^[1-4](,[1-4])*$ ]] || usage "--stages takes numbers 1-4 separated by commas"
      STAGES=$2
      shift 2
      ;;
    --dry)
      DRY=1
      shift
      ;;
    -*) usage "unknown option '$1'" ;;
    *)
      [[ -z "$BUNDLE" ]] || usage "one BUNDLE folder only, got '$BUNDLE' and '$1'"
      BUNDLE=$1
      shift
      ;;
  esac
done
[[ -n "$BUNDLE" ]] || usage "no BUNDLE folder given (scripts/gpu-bundle.sh builds one)"
[[ -f "$BUNDLE/bin/ncclbot" && -f "$BUNDLE/run-gpu-tests.sh" ]] ||
  usage "$BUNDLE is not a GPU bundle: no bin/ncclbot or run-gpu-tests.sh (scripts/gpu-bundle.sh builds one)"
# A copy that lost its modes on the way still runs.
[[ -x "$BUNDLE/bin/ncclbot" ]] || chmod u+x "$BUNDLE"/bin/ncclbot "$BUNDLE"/bin/gpu_*_test 2>/dev/null ||
  usage "$BUNDLE/bin/ncclbot is not executable and cannot be made so"
command -v python3 >/dev/null 2>&1 || usage "python3 is needed for the summary"
BUDGET=${NCCLBOT_GPU_CHECK_BUDGET_S:-470}
[[ "$BUDGET" =~ ^[1-9][0-9]*$ ]] || usage "NCCLBOT_GPU_CHECK_BUDGET_S must be a number of seconds, not '$BUDGET'"
# Each sanitizer run's limit; more for a rerun of stage 3 alone (`--stages 3`), should 30 s not do.
SANITIZER_S=${NCCLBOT_GPU_CHECK_SANITIZER_S:-30}
[[ "$SANITIZER_S" =~ ^[1-9][0-9]*$ ]] ||
  usage "NCCLBOT_GPU_CHECK_SANITIZER_S must be a number of seconds, not '$SANITIZER_S'"
BUNDLE=$(cd "$BUNDLE" && pwd)
OUT_DIR=${OUT_DIR:-$PWD/gpu-check-out}
mkdir -p "$OUT_DIR" 2>/dev/null || usage "cannot create the output folder $OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)

NCCLBOT="$BUNDLE/bin/ncclbot"
SUMMARY="$OUT_DIR/summary.json"
REPORT=(python3 "$SCRIPTS/gpu_check_report.py")
report() { "${REPORT[@]}" "$@"; }
wants() { [[ ",$STAGES," == *",$1,"* ]]; }
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
START=$SECONDS
dry_flag=()
((DRY)) && dry_flag=(--dry)
report init "$SUMMARY" --bundle "$BUNDLE" --budget "$BUDGET" --stages "$STAGES" "${dry_flag[@]}" ||
  usage "cannot write $SUMMARY"
for n in 1 2 3 4; do : >"$OUT_DIR/stage$n.log"; done

# step STAGE NAME LIMIT OUTFILE CMD...: runs CMD under `timeout`, for LIMIT seconds or what is left of
# the budget if less, its stdout into OUTFILE (or the stage's log for "-") and its stderr into the
# log (and, with an OUTFILE, also into $SCRATCH/last.err); records the exit code and time in the
# summary (with OUTFILE's JSON); returns the exit code (124 timed out, 125 not run for want of time).
step() {
  local stage=$1 name=$2 limit=$3 outfile=$4
  shift 4
  local log="$OUT_DIR/stage$stage.log" left=$((BUDGET - (SECONDS - START) - 5)) t0=$SECONDS rc
  ((limit <= left)) || limit=$left
  : >"$SCRATCH/last.err"
  if ((limit < 3)); then
    echo "== $name: not run, no time left of the ${BUDGET}s budget" >>"$log"
    rc=125
  else
    echo "== $name (at most ${limit}s): $*" >>"$log"
    if [[ "$outfile" == - ]]; then
      timeout -k 5 "$limit" "$@" >>"$log" 2>&1
      rc=$?
    else
      timeout -k 5 "$limit" "$@" >"$outfile" 2>"$SCRATCH/last.err"
      rc=$?
      cat "$SCRATCH/last.err" >>"$log"
    fi
  fi
  local took=$((SECONDS - t0)) data=()
  ((rc == 125)) || echo "== $name: exit $rc in ${took}s" >>"$log"
  [[ "$outfile" != - && -s "$outfile" ]] && data=(--data "$outfile")
  report step "$SUMMARY" "$stage" "$name" "$rc" "$took" "${data[@]}"
  local said
  case $rc in
    0) said=ok ;;
    124 | 137) said="TIMED OUT" ;;
    125) said="not run, no time left" ;;
    *) said="FAILED (exit $rc)" ;;
  esac
  echo "gpu-check: stage $stage: $name: $said (${took}s)" >&2
  return "$rc"
}
stage_status() {
  report stage "$SUMMARY" "$1" "$2"
  echo "== stage $1: $2" >>"$OUT_DIR/stage$1.log"
  echo "gpu-check: stage $1: $2" >&2
}
EXIT=0
fail_with() { ((EXIT == 1)) || EXIT=$1; }

# --- Stage 1: the bundle, the device, the gpu tests --------------------------------------------
stage_status 1 running
S1=passed
# Every program's libraries resolve from the bundle (a glibc older than the bundle's needs shows
# here as "version `GLIBC_2.xx' not found").
bundle_ok=1
for program in "$BUNDLE"/bin/ncclbot "$BUNDLE"/bin/gpu_*_test; do
  step 1 "ldd $(basename "$program")" 3 - ldd "$program" || bundle_ok=0
done
if grep -q "not found" "$OUT_DIR/stage1.log"; then
  bundle_ok=0
  # Say what is missing and what the bundle needs of the machine (glibc, the C++ runtime).
  { grep "not found" "$OUT_DIR/stage1.log" | sort -u
    grep -h '^newest' "$BUNDLE/MANIFEST.txt" 2>/dev/null
    echo "gpu-check: the bundle's programs cannot load here (above); this machine has $(ldd --version 2>/dev/null | head -1)"
  } | tee -a "$OUT_DIR/stage1.log" >&2
fi
GLIBC=$(ldd --version 2>/dev/null | head -1 | sed 's/^ldd //')
if command -v nvidia-smi >/dev/null 2>&1; then
  # Fields every driver of an sm_90 device has; the SM count is not one of them (the probe says it).
  step 1 nvidia-smi 5 "$SCRATCH/smi.csv" nvidia-smi \
    --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_cap --format=csv,noheader,nounits ||
    step 1 "nvidia-smi (fewer fields)" 5 "$SCRATCH/smi.csv" nvidia-smi \
      --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader,nounits
else
  echo "== nvidia-smi: not installed" >>"$OUT_DIR/stage1.log"
fi
# The probe: a replay of a few steps on the device, whose JSON names the device and its SMs.
step 1 probe 15 "$SCRATCH/probe.json" "$NCCLBOT" bench --backend cuda --policy ucb1 --arms 12 --contexts 8 \
  --seeds 1 --horizon 16 --repetitions 1 --json
probe_rc=$?
cp "$SCRATCH/last.err" "$SCRATCH/probe.err"
report device "$SUMMARY" --probe "$SCRATCH/probe.json" --probe-rc "$probe_rc" --probe-err "$SCRATCH/probe.err" \
  --smi "$SCRATCH/smi.csv" --glibc "$GLIBC" | tee -a "$OUT_DIR/stage1.log" >&2
device_rc=${PIPESTATUS[0]}
DEVICE=0
case $device_rc in
  0) DEVICE=1 ;;
  3) S1="no device" ;;
  *) S1="failed: the probe (stage1.log)" ;;
esac
((bundle_ok)) || S1="failed: a library is not found (stage1.log)"
if wants 1 && ((bundle_ok)); then
  mapfile -t programs < <(cd "$BUNDLE/bin" && ls gpu_*_test 2>/dev/null)
  step 1 "gpu tests" 100 - bash "$BUNDLE/run-gpu-tests.sh" "$SCRATCH/reports" 95
  runner_rc=$?
  report tests "$SUMMARY" "$SCRATCH/reports" "$OUT_DIR/tests.json" --programs "${programs[*]}" \
    --runner-rc "$runner_rc" --device-usable "$DEVICE" | tee -a "$OUT_DIR/stage1.log" >&2
  case ${PIPESTATUS[0]} in
    0) ;;
    3) [[ "$S1" == failed* ]] || S1="no device" ;;
    *) S1="failed: the gpu tests (tests.json)" ;;
  esac
fi
# ncclbot-sweep (docs/campaign.md "Forced arms per call"): forced arms per call through NCCL 2.31+'s
# nccl*Config, one rank, two sizes of all-reduce and all-gather, 5 rounds. NCCL itself (350 MB) does
# not travel in the bundle: this machine's, from NCCLBOT_NCCL_LIB_DIR or the nvidia-nccl-cu13 wheel.
if wants 1 && ((DEVICE)); then
  NCCL_LIB_DIR=${NCCLBOT_NCCL_LIB_DIR:-$(python3 -c 'import nvidia.nccl, os
print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)}
  sweep_skip=""
  if [[ ! -f "$BUNDLE/bin/ncclbot-sweep" ]]; then
    # Not bundled by default (it would take a fifth of the 48 MiB): the bundle's build folder makes the
    # one-rank program (MPI off) where nccl.h >= 2.31 is found; copy it to BUNDLE/bin.
    sweep_skip="the bundle has no bin/ncclbot-sweep"
  elif [[ ! -f "$NCCL_LIB_DIR/libnccl.so.2" ]]; then
    sweep_skip="no libnccl.so.2 on this machine (set NCCLBOT_NCCL_LIB_DIR)"
  fi
  if [[ -n "$sweep_skip" ]]; then
    echo "== ncclbot-sweep: not run: $sweep_skip" >>"$OUT_DIR/stage1.log"
    report set "$SUMMARY" ncclbot_sweep "not run: $sweep_skip"
  else
    step 1 ncclbot-sweep 20 - env LD_LIBRARY_PATH="$NCCL_LIB_DIR:$BUNDLE/bin" "$BUNDLE/bin/ncclbot-sweep" \
      --collectives allreduce,allgather --bytes 65536,4194304 --algos Tree,Ring --protos LL,LL128,Simple \
      --channels 0,8 --iterations 5 --warmup 2 --fabric gpu-check --out "$SCRATCH/sweep.csv" ||
      S1="failed: ncclbot-sweep (stage1.log)"
    # NCCL's own pick runs everywhere: 4 contexts x 5 rounds; the forced arms NCCL honoured form a sweep.
    step 1 "ncclbot-sweep files" 3 - python3 -c 'import csv, os, sys
own = list(csv.DictReader(open(sys.argv[1] + "/sweep.nccl-own.csv")))
print(len(own), "rows of NCCL'"'"'s own pick;", os.path.exists(sys.argv[1] + "/sweep.csv") and "a sweep" or "no forced arm ran")
sys.exit(0 if len(own) == 20 else 1)' "$SCRATCH" || S1="failed: ncclbot-sweep's files (stage1.log)"
    if [[ -f "$SCRATCH/sweep.csv" ]]; then
      step 1 "ncclbot-sweep inspect" 3 "$SCRATCH/sweep-inspect.json" "$NCCLBOT" inspect "$SCRATCH/sweep.csv" --json ||
        S1="failed: ncclbot-sweep's sweep (stage1.log)"
    fi
  fi
fi
[[ "$S1" != passed ]] || wants 1 || S1="device found (gpu tests not requested)"
stage_status 1 "$S1"
case $S1 in
  failed*) fail_with 1 ;;
  "no device") fail_with 3 ;;
esac
# Without a usable device (or with a broken bundle) the later stages have nothing to measure.
BLOCKED=""
if ((!bundle_ok)); then
  BLOCKED="not run: a library is not found"
elif ((device_rc == 1)); then
  BLOCKED="not run: the probe failed (stage1.log)"
elif ((!DEVICE && !DRY)); then
  BLOCKED="not run: no usable CUDA device"
fi

# Whether stage N runs (marked running), else records why not: not asked for, blocked by an earlier
# stage, or (stages that need a GPU, with needs_gpu=1) a dry run.
stage_runs() {
  local n=$1 needs_gpu=$2
  if ! wants "$n"; then
    stage_status "$n" "not requested"
  elif [[ -n "$BLOCKED" ]]; then
    stage_status "$n" "$BLOCKED"
  elif ((DRY && needs_gpu)); then
    stage_status "$n" "not run: dry run (needs a GPU)"
  else
    stage_status "$n" running
    return 0
  fi
  return 1
}

# --- Stage 2: benchmarks -------------------------------------------------------------------------
SEEDS=(8 128 1024)
HORIZON=4096
GPU=cuda
if ((DRY)); then
  SEEDS=(1 2)
  HORIZON=256
  GPU=cpu # the CPU stands in for the GPU column
fi
report set "$SUMMARY" horizon "$HORIZON"
if stage_runs 2 0; then
  S2=passed
  ucb1=(--policy ucb1 --arms 12 --contexts 480 --horizon "$HORIZON" --json)
  cpu_limits=(5 8 25)
  gpu_limits=(8 8 10)
  for i in "${!SEEDS[@]}"; do
    s=${SEEDS[$i]}
    # One repetition on the CPU (it is the reference, not the point) and three on the GPU.
    step 2 "bench cpu $s seeds" "${cpu_limits[$i]}" "$SCRATCH/cpu-$s.json" \
      "$NCCLBOT" bench --backend cpu --threads "$(nproc)" --seeds "$s" --repetitions 1 "${ucb1[@]}" || S2=failed
    step 2 "bench gpu $s seeds" "${gpu_limits[$i]}" "$SCRATCH/gpu-$s.json" \
      "$NCCLBOT" bench --backend "$GPU" --seeds "$s" --repetitions 3 "${ucb1[@]}" || S2=failed
  done
  if ((!DRY)); then
    # The state lives in shared memory, so the block sets the threads per SM (docs/cuda.md).
    step 2 blocks 25 "$SCRATCH/blocks.json" "$NCCLBOT" bench --backend cuda --policy ucb1 --policy thompson \
      --arms 12 --contexts 480 --seeds 128 --horizon "$HORIZON" --repetitions 1 --cuda-block 32 64 96 128 --json ||
      S2=failed
    # 1,024 threads of the delayed random policy's 72 registers exceed an SM's 65,536: cut, not failed.
    step 2 "block 1024" 10 "$SCRATCH/block1024.json" "$NCCLBOT" bench --backend cuda --policy random --policy ucb1 \
      --delay 5 --arms 12 --contexts 64 --seeds 64 --horizon 256 --repetitions 1 --cuda-block 1024 --json ||
      S2=failed
    # 512 knob arms per context: each replay's state in local memory (kernels/replay_knobs.cu).
    for b in cpu cuda; do
      step 2 "knobs $b" 40 "$SCRATCH/knobs-$b.json" "$NCCLBOT" bench --backend "$b" --policy ucb1 --policy osub \
        --arms 512 --contexts 480 --seeds 128 --horizon 1024 --repetitions 1 --json || S2=failed
    done
  fi
  # The quick study, its bootstrap made heavy, on both backends: the GPU's run bootstraps on the device.
  resamples=200000
  ((DRY)) && resamples=1000
  sed "s/^bootstrap_resamples = .*/bootstrap_resamples = $resamples/" \
    "$BUNDLE/share/ncclbot/experiments/quick.toml" >"$SCRATCH/quick-bootstrap.toml"
  report set "$SUMMARY" study "quick.toml with $resamples bootstrap resamples"
  step 2 "study cpu" 20 - "$NCCLBOT" run "$SCRATCH/quick-bootstrap.toml" --out "$SCRATCH/study-cpu" --no-figures \
    --backend cpu || S2=failed
  step 2 "study gpu" 20 - "$NCCLBOT" run "$SCRATCH/quick-bootstrap.toml" --out "$SCRATCH/study-gpu" --no-figures \
    --backend "$GPU" || S2=failed
  step 2 "study results identical" 5 - "${REPORT[@]}" same-results "$SCRATCH/study-cpu/results.json" \
    "$SCRATCH/study-gpu/results.json" || S2=failed
  stage_status 2 "$S2"
  [[ "$S2" == passed ]] || fail_with 1
fi

# --- Stage 3: compute-sanitizer and Nsight Compute --------------------------------------------------
tool_path() { command -v "$1" 2>/dev/null || { [[ -x "/usr/local/cuda/bin/$1" ]] && echo "/usr/local/cuda/bin/$1"; }; }
if stage_runs 3 1; then
  S3=passed
  SANITIZER=$(tool_path compute-sanitizer)
  small=(bench --backend cuda --policy ucb1 --policy thompson --policy swucb:window=8 --policy ducb:gamma=0.9
    --arms 12 --contexts 24 --seeds 2 --horizon 64 --repetitions 1)
  if [[ -n "$SANITIZER" ]]; then
    # memcheck on the delayed path (the cursor's ring in local memory), racecheck on the undelayed
    # one (every thread's state in the block's shared memory).
    step 3 memcheck "$SANITIZER_S" - "$SANITIZER" --tool memcheck --leak-check full --error-exitcode 9 \
      "$NCCLBOT" "${small[@]}" --delay 5 || S3=failed
    step 3 racecheck "$SANITIZER_S" - "$SANITIZER" --tool racecheck --error-exitcode 9 "$NCCLBOT" "${small[@]}" --delay 0 ||
      S3=failed
  else
    echo "== compute-sanitizer: not installed" >>"$OUT_DIR/stage3.log"
    S3="passed (no compute-sanitizer)"
  fi
  NCU=$(tool_path ncu)
  if [[ -n "$NCU" ]]; then
    # Warp instructions of one replay launch x 32 / its steps (480 contexts x 8 seeds x 1024 steps).
    # A failure here (no permission for the counters) leaves the static estimate; it fails nothing.
    if step 3 ncu 20 - "$NCU" --clock-control none --kernel-name regex:replay_kernel --launch-count 1 \
      --metrics smsp__inst_executed.sum --csv --log-file "$SCRATCH/ncu.csv" "$NCCLBOT" bench --backend cuda \
      --policy ucb1 --arms 12 --contexts 480 --seeds 8 --horizon 1024 --repetitions 1; then
      per_step=$(report ncu-per-step "$SCRATCH/ncu.csv" $((480 * 8 * 1024)))
      [[ -z "$per_step" ]] || report annotate "$SUMMARY" ncu "instructions_per_step=$per_step"
    fi
  else
    echo "== ncu: not installed" >>"$OUT_DIR/stage3.log"
  fi
  stage_status 3 "$S3"
  [[ "$S3" == passed* ]] || fail_with 1
fi

# --- Stage 4: the JAX / CuPy peers ----------------------------------------------------------------
if stage_runs 4 1; then
  if step 4 peers 80 "$SCRATCH/peers.json" python3 "$SCRIPTS/bench_peers_gpu.py" --ncclbot "$NCCLBOT" --json; then
    stage_status 4 passed
  else
    stage_status 4 failed
    fail_with 1
  fi
fi

report finish "$SUMMARY" "$EXIT" "$((SECONDS - START))"
exit "$EXIT"
