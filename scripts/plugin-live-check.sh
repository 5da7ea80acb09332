#!/usr/bin/env bash
# Live check of libnccl-tuner-ncclbot.so inside the real NCCL (2.28) on a GPU machine: builds a tiny
# NCCL program (tests/plugin/live/nccl_probe.cpp) against the machine's NCCL, runs it with the
# plugin as tuner and profiler and NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING, and shows from
# NCCL's own log that the plugin was loaded and consulted, and that measured latencies came back.
#
#   scripts/plugin-live-check.sh [BUILD_DIR]        (default BUILD_DIR: build)
#
# Runs:
#   1. one rank, online mode (ucb1): loaded, consulted, profiler latencies delivered;
#   1b. the same with a watch rule: calls run unwatched, and none of them instrumented by NCCL
#      (reported, not required);
#   2. one rank, table mode;
#   3. experimental: two processes sharing one GPU, each with its own NCCL_HOSTID so NCCL's
#      duplicate-GPU check (init.cc, hostHash from NCCL_HOSTID) might let them form a 2-rank
#      communicator over sockets; online mode with the leader on 127.0.0.1. Reported, not required.
# Exit 0 when runs 1 and 2 pass, 1 otherwise, 77 when there is no GPU (nothing to check).
# Logs are kept in $OUT_DIR (default: a fresh temporary folder, printed at the end).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
[[ "$BUILD" = /* ]] || BUILD="$ROOT/$BUILD"
PLUGIN="$BUILD/libnccl-tuner-ncclbot.so"
OUT=${OUT_DIR:-$(mktemp -d /tmp/ncclbot-live.XXXXXX)}
mkdir -p "$OUT"
CUDA=${CUDA_HOME:-/usr/local/cuda}

if [[ ! -f "$PLUGIN" ]]; then
  echo "plugin-live-check: $PLUGIN not found; build the target nccl_tuner_ncclbot first" >&2
  exit 1
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "plugin-live-check: no GPU here (nvidia-smi -L failed); nothing to check" >&2
  exit 77
fi

nccl_inc=""
for d in "$CUDA/include" /usr/local/include /usr/include; do
  [[ -f "$d/nccl.h" ]] && { nccl_inc="$d"; break; }
done
nccl_lib=""
for d in "$CUDA/lib64" /usr/local/lib /usr/lib/x86_64-linux-gnu "$CUDA/lib"; do
  [[ -e "$d/libnccl.so" ]] && { nccl_lib="$d"; break; }
done
if [[ -z "$nccl_inc" || -z "$nccl_lib" ]]; then
  echo "plugin-live-check: NCCL headers or library not found (looked under $CUDA, /usr/local, /usr)" >&2
  exit 1
fi
echo "NCCL: $(grep -E '^#define NCCL_(MAJOR|MINOR|PATCH)' "$nccl_inc/nccl.h" | awk '{printf "%s ", $3}')from $nccl_lib"
PROBE="$OUT/nccl_probe"
g++ -O2 -std=c++17 "$ROOT/tests/plugin/live/nccl_probe.cpp" -I"$CUDA/include" -I"$nccl_inc" -L"$CUDA/lib64" \
  -L"$nccl_lib" -Wl,-rpath,"$nccl_lib" -lnccl -lcudart -o "$PROBE" || { echo "probe build failed" >&2; exit 1; }

common_env=(NCCL_TUNER_PLUGIN="$PLUGIN" NCCL_PROFILER_PLUGIN="$PLUGIN" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING
            NCCLBOT_SEED=1)
status=0

# expect LOG PATTERN WHAT: one PASS/FAIL line, the matching lines shown.
expect() {
  local log=$1 pattern=$2 what=$3
  if grep -E -q "$pattern" "$log"; then
    echo "  PASS $what"
    grep -E "$pattern" "$log" | head -3 | sed 's/^/       | /'
  else
    echo "  FAIL $what (no line matching /$pattern/ in $log)"
    return 1
  fi
}

echo "== 1. one rank, online mode (ucb1:c=0.5,n0=8)"
env "${common_env[@]}" NCCLBOT_MODE=online NCCLBOT_POLICY='ucb1:c=0.5,n0=8' PROBE_ID_FILE="$OUT/id1" \
  timeout 300 "$PROBE" >"$OUT/run1.log" 2>&1
echo "  probe exit code $?"
expect "$OUT/run1.log" 'TUNER.*ncclbot|ncclbot.*TUNER|tuner.*ncclbot' "NCCL names the ncclbot tuner" || status=1
expect "$OUT/run1.log" 'ncclbot: tuner initialised' "the tuner's init ran (NCCL's logger, TUNING)" || status=1
expect "$OUT/run1.log" 'ncclbot: profiler initialised' "the profiler's init ran" || status=1
expect "$OUT/run1.log" 'ncclbot: first call of AllReduce' "getCollInfo consulted (first call per size class)" || status=1
expect "$OUT/run1.log" 'latencies delivered' "profiler finalised with its latency count" || status=1
grep -E 'probe rank 0: allreduce' "$OUT/run1.log" | sed 's/^/       /'

echo "== 1b. one rank, online mode with a watch rule (reported, not required)"
# Each size runs 400 calls in a row, so the call expected next is the one that comes. On an NCCL that
# reloads its activation mask at each collective's API call (docs/plugin.md "The cost of watching")
# most calls run unwatched and no kernel channel comes of one taken as unwatched; an NCCL that does
# not shows channels there (and profiler v4, NCCL 2.27, is never switched: no "profiler watching" line).
env "${common_env[@]}" NCCLBOT_MODE=online NCCLBOT_POLICY='ucb1:c=0.5,n0=8@watch:full=2,floor=0.05' \
  PROBE_ITERS=400 PROBE_ID_FILE="$OUT/id1b" timeout 300 "$PROBE" >"$OUT/run1b.log" 2>&1
echo "  probe exit code $?"
expect "$OUT/run1b.log" 'profiler watching: .*, [1-9][0-9]* collectives run unwatched' \
  "calls ran unwatched" || true
expect "$OUT/run1b.log" '; 0 kernel channels came of calls taken as unwatched' \
  "NCCL instrumented none of the calls taken as unwatched" || true

echo "== 2. one rank, table mode"
printf 'fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n*,allreduce,*,*,0,*,Ring,Simple\n' \
  >"$OUT/table.csv"
env "${common_env[@]}" NCCLBOT_MODE=table NCCLBOT_TABLE="$OUT/table.csv" PROBE_ID_FILE="$OUT/id2" \
  timeout 300 "$PROBE" >"$OUT/run2.log" 2>&1
echo "  probe exit code $?"
expect "$OUT/run2.log" 'mode table' "table mode active" || status=1
expect "$OUT/run2.log" 'table row 2 chose Ring/Simple' "table consulted" || status=1

echo "== 3. experimental: two processes on one GPU, distinct NCCL_HOSTID, leader on loopback"
port=$((20000 + RANDOM % 20000))
rm -f "$OUT/id3"
secret="live-check-$RANDOM$RANDOM$RANDOM-$$"  # the leader authenticates its followers (docs/plugin.md)
for r in 0 1; do
  env "${common_env[@]}" NCCLBOT_MODE=online NCCLBOT_POLICY='ucb1:c=0.5,n0=8' NCCLBOT_LEADER="127.0.0.1:$port" \
    NCCLBOT_LEADER_SECRET="$secret" \
    NCCLBOT_RANK=$r NCCL_HOSTID="ncclbot-live-host-$r" NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 \
    PROBE_RANK=$r PROBE_NRANKS=2 PROBE_ID_FILE="$OUT/id3" PROBE_ITERS=10 \
    timeout 300 "$PROBE" >"$OUT/run3.rank$r.log" 2>&1 &
  pids[$r]=$!
done
for r in 0 1; do
  wait "${pids[$r]}"
  echo "  rank $r exit code $?"
done
if grep -q 'probe rank 0: done' "$OUT/run3.rank0.log" && grep -q 'probe rank 1: done' "$OUT/run3.rank1.log"; then
  echo "  a 2-rank communicator formed on one GPU"
  for r in 0 1; do grep -E 'ncclbot: (tuner initialised|first call)' "$OUT/run3.rank$r.log" | head -4 | sed "s/^/       rank $r | /"; done
  if diff <(grep -o 'first call of AllReduce [0-9]* bytes.*ncclbot.s [A-Za-z/]*' "$OUT/run3.rank0.log" | sed 's/commId [^:]*//') \
          <(grep -o 'first call of AllReduce [0-9]* bytes.*ncclbot.s [A-Za-z/]*' "$OUT/run3.rank1.log" | sed 's/commId [^:]*//') >/dev/null; then
    echo "  first decisions per size class agree between the ranks"
  else
    echo "  first decisions per size class differ between the ranks (see the logs)"
  fi
else
  echo "  no 2-rank communicator; NCCL said:"
  grep -h -E 'WARN|Duplicate|error|failed' "$OUT"/run3.rank*.log | head -6 | sed 's/^/       | /'
fi

echo "logs: $OUT"
exit $status
