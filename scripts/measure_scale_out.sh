#!/usr/bin/env bash
# Measures one process against MPI ranks (and tune against its sharded rounds) on the same replay
# workload, a study and the study's statistics alone, and checks that every variant prints the
# same bytes. Usage (from the repository root):
#   scripts/measure_scale_out.sh BUILD_DIR [REPEATS]
# Prints one line per variant: the median wall seconds over REPEATS runs (all runs listed) and the
# user CPU seconds of the last run (for MPI variants: the ranks plus mpirun itself). The machine's
# load is printed first: on a shared machine the wall times say as much about the neighbours as
# about ncclbot. STUDY (default experiments/quick.toml) is the study timed with run / run-units:
#   scripts/measure_scale_out.sh build 1 experiments/paper.toml
set -euo pipefail
build=${1:?build dir}
repeats=${2:-3}
study=${3:-experiments/quick.toml}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/ncclbot" synth --fabric h100-ib-a --out "$work/sweep.csv" 2>/dev/null
replay="replay --sweep $work/sweep.csv --policy ucb1:c=0.05|0.1|0.2,n0=0|4 --policy thompson --policy egreedy
        --seeds 50 --horizon 1000 --json"
echo "cores: $(nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

measure() {  # name, command...; stdout of the command goes to $work/<name>.out
  local name=$1
  shift
  local walls=()
  for _ in $(seq "$repeats"); do
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/env time -f "%U" -o "$work/$name.cpu" "$@" >"$work/$name.out" 2>/dev/null
    t1=$(date +%s.%N)
    walls+=("$(echo "$t1 - $t0" | bc)")
  done
  local median
  median=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(((repeats + 1) / 2))p")
  printf '%-48s wall %6.2f s (runs: %s; user CPU of last run %s s)\n' "$name" "$median" "${walls[*]}" \
    "$(tail -1 "$work/$name.cpu")"
}

measure "replay, 1 process x 1 thread" "$build/ncclbot" $replay --threads 1
measure "replay, 1 process x 2 threads" "$build/ncclbot" $replay --threads 2
measure "replay, mpirun -np 2 x 1 thread" mpirun -np 2 "$build/ncclbot-mpi" $replay --threads 1
for v in "replay, 1 process x 2 threads" "replay, mpirun -np 2 x 1 thread"; do
  cmp -s "$work/replay, 1 process x 1 thread.out" "$work/$v.out" && echo "identical output: $v" ||
    echo "OUTPUT DIFFERS: $v"
done

# tune in two sharded rounds (2 shards each, run one after the other: the CPU time shows whether
# the work is split or repeated) against one process.
grid='ucb1:c=0.05|0.1|0.2,n0=0|4'
tune="tune --sweep $work/sweep.csv --policy thompson --policy egreedy --seeds 50 --horizon 1000 --threads 1"
cat >"$work/tune_rounds.sh" <<EOF
set -e
rm -f $work/tp.* $work/ts.*
for i in 0 1; do $build/ncclbot $tune --policy '$grid' --phase tune --shard \$i/2 --out $work/tp.\$i 2>/dev/null; done
$build/ncclbot merge $work/tp.* --out $work/choice.json >/dev/null
for i in 0 1; do
  $build/ncclbot $tune --policy '$grid' --phase score --choice $work/choice.json --shard \$i/2 \\
    --out $work/ts.\$i 2>/dev/null
done
$build/ncclbot merge $work/ts.* --json
EOF
measure "tune, 1 process x 1 thread" "$build/ncclbot" $tune --policy "$grid" --json
measure "tune, 2 shards x 2 rounds in turn, 1 thread" bash "$work/tune_rounds.sh"
cmp -s "$work/tune, 1 process x 1 thread.out" "$work/tune, 2 shards x 2 rounds in turn, 1 thread.out" &&
  echo "identical output: tune in sharded rounds" || echo "OUTPUT DIFFERS: tune in sharded rounds"

measure "study $(basename "$study"), run, 1 process x 2 threads" \
  sh -c "rm -rf '$work/s1' && '$build/ncclbot' run $study --out '$work/s1' --no-figures --threads 2"
measure "study $(basename "$study"), run-units, mpirun -np 2 x 1 thread" \
  sh -c "rm -rf '$work/s2' && mpirun -np 2 '$build/ncclbot-mpi' run-units $study --out '$work/s2' --no-figures --threads 1"
cmp -s "$work/s1/results.json" "$work/s2/results.json" && echo "identical results.json: study over 2 ranks" ||
  echo "RESULTS DIFFER: study over 2 ranks"

# The report's statistics alone: the same study with BOOTSTRAP_RESAMPLES resamples per interval
# (default 200000), its units already computed, so only the statistics and the report are timed.
sed "s/^bootstrap_resamples = .*/bootstrap_resamples = ${BOOTSTRAP_RESAMPLES:-200000}/" "$study" >"$work/stats.toml"
"$build/ncclbot" run "$work/stats.toml" --out "$work/b1" --no-figures --threads 2 >/dev/null 2>&1
cp -r "$work/b1" "$work/b2"
measure "statistics only, run, 1 process x 2 threads" \
  "$build/ncclbot" run "$work/stats.toml" --out "$work/b1" --no-figures --threads 2
measure "statistics only, run-units, mpirun -np 2 x 1 thread" \
  mpirun -np 2 "$build/ncclbot-mpi" run-units "$work/stats.toml" --out "$work/b2" --no-figures --threads 1 --shared-dir
cmp -s "$work/b1/results.json" "$work/b2/results.json" &&
  echo "identical results.json: bootstrap resamples over 2 ranks" || echo "RESULTS DIFFER: bootstrap over 2 ranks"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
