#!/usr/bin/env bash
# Shows that a restructuring changes no output: builds the `ncclbot` program and the tuner plugin of
# REV (a commit, default HEAD~1) in a worktree of its own, runs the same commands with both builds
# (REV's and this checkout's build/, which must be built), and compares every output file byte for
# byte. Prints one line per output and "compare_outputs: identical" (exit 0) or the files that
# differ (exit 1).
#
# Usage: scripts/compare_outputs.sh [REV] [--keep]
#   --keep   leave the worktree and the outputs (in $TMPDIR/ncclbot-compare-*) for a closer look
#
# The commands cover the study pipeline (synth, inspect, replay, tune, a whole study with its
# report and results.json, export-table), sharded work and its merges (replay, tune in two rounds,
# a study's units), the statistics, the model and the plugin (plugin-check with a decision log and in
# leader mode, ope and telemetry on that log), a campaign plan and its status, an nccl-tests log
# ingested, the HiPIPE model, and what several commands print for a person (stdout without --json).
# Figures are left out (matplotlib's PNGs are not the program's bytes), and so is the decision log
# itself (it names its process). With ccache installed, REV's build reuses this checkout's objects
# wherever the sources are the same.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=HEAD~1
keep=0
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) rev=$arg ;;
  esac
done
here=$PWD
[ -x build/ncclbot ] && [ -f build/libnccl-tuner-ncclbot.so ] ||
  { echo "compare_outputs: build this checkout first (scripts/build.sh default ncclbot nccl_tuner_ncclbot)" >&2; exit 2; }
commit=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "compare_outputs: no commit '$rev'" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ncclbot-compare-XXXXXX")
cleanup() {
  git worktree remove --force "$work/tree" >/dev/null 2>&1 || true
  if ((keep)); then echo "compare_outputs: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
git worktree add --detach "$work/tree" "$commit" >/dev/null 2>&1
echo "compare_outputs: building $rev (${commit:0:12}) in $work/tree" >&2
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-/}
cmake -S "$work/tree" -B "$work/tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNCCLBOT_BUILD_TESTS=OFF >/dev/null
cmake --build "$work/tree/build" --target ncclbot nccl_tuner_ncclbot >"$work/build.log" 2>&1 ||
  { tail -n 30 "$work/build.log" >&2; echo "compare_outputs: $rev does not build" >&2; exit 2; }

# run SIDE BUILD_DIR SOURCE_DIR: every command, from inside $work/SIDE with relative paths (so no
# output names its side), on the presets and the quick study as that revision has them.
run() {
  local side=$1 bin=$2/ncclbot plugin=$2/libnccl-tuner-ncclbot.so src=$3 out=$work/$1
  mkdir -p "$out"
  cp "$src/experiments/quick.toml" "$out/quick.toml"
  (
    cd "$out"
    export NCCLBOT_DATA_DIR=$src/data
    "$bin" synth --fabric h100-ib-a --seed 20260 --nodes 4,16 --out sweep.csv --json >synth.json
    "$bin" inspect sweep.csv --json >inspect.json
    "$bin" replay --sweep sweep.csv --policy auto --policy ucb1:c=0.1,n0=4 --policy greedy:n0=4 --seeds 2 \
      --horizon 300 --json >replay.json
    "$bin" replay --sweep sweep.csv --policy ucb1:c=0.1,n0=4 --seeds 2 --horizon 300 --as-deployed leader \
      --json >replay_leader.json
    "$bin" model --fabric h100-ib-a --collective allreduce --bytes 1048576 --nodes 16 --json >model.json
    echo '{"p": [0.01, 0.04, 0.03, 0.2], "alpha": 0.05}' | "$bin" stats holm >stats.json
    "$bin" run quick.toml --out quick --no-figures >/dev/null 2>&1
    "$bin" export-table --study quick --policy UCB1 --out table.csv >/dev/null
    "$bin" plugin-check --plugin "$plugin" --sweep sweep.csv --policy egreedy:eps=0.3,decay=0,n0=4 --horizon 200 \
      --log decisions.log --json >plugin_check.json
    "$bin" ope --log decisions.log --sweep sweep.csv --policy ucb1:c=0.1,n0=4 --json >ope.json
    "$bin" plugin-check --plugin "$plugin" --sweep sweep.csv --policy ucb1:c=0.1,n0=4 --horizon 60 --ranks 2 \
      --nodes 4 --collectives allreduce --json >plugin_check_ranks.json
    # Sharded work and its merges: replay, tune in two rounds, a study's units.
    local r=("$bin" replay --sweep sweep.csv --policy ucb1:c=0.1,n0=4 --policy auto --seeds 2 --horizon 300)
    for i in 0 1; do "${r[@]}" --shard $i/2 --out rpart.$i --json >rshard.$i.json; done
    "$bin" merge rpart.0 rpart.1 --json >replay_merged.json
    local t=("$bin" tune --sweep sweep.csv --policy 'ucb1:c=0.05|0.1,n0=0|4' --policy auto --seeds 2 --horizon 200)
    "${t[@]}" --json >tune.json
    for i in 0 1; do "${t[@]}" --phase tune --shard $i/2 --out tpart.$i >/dev/null; done
    "$bin" merge tpart.0 tpart.1 --out choice.json >/dev/null
    for i in 0 1; do "${t[@]}" --phase score --choice choice.json --shard $i/2 --out spart.$i >/dev/null; done
    "$bin" merge spart.0 spart.1 --json >tune_merged.json
    for i in 0 1; do "$bin" run-units quick.toml --out units --shard $i/2 >/dev/null 2>&1; done
    "$bin" run quick.toml --out units --no-figures >/dev/null 2>&1
    "$bin" telemetry decisions.log --out telemetry --no-figures >/dev/null
    # A campaign and its status, an nccl-tests log ingested, the HiPIPE model.
    "$bin" plan --fabric h100-ib-a --nodes 2,4 --collectives allreduce,allgather --out campaign --json >plan.json
    "$bin" plan --status campaign --json >plan_status.json
    cp "$src/tests/data/nccl-tests/srun_prefixed.txt" nccl_tests.txt
    "$bin" ingest nccl_tests.txt --fabric gh200 --out ingested.csv --json >ingest.json
    "$bin" hipipe --fabric h100-ib-a --bytes 64M --json >hipipe.json
    # What the commands say to a person (stdout without --json).
    "$bin" inspect sweep.csv >inspect.txt
    "$bin" replay --sweep sweep.csv --policy auto --policy ucb1:c=0.1,n0=4 --seeds 2 --horizon 300 >replay.txt
    "${t[@]}" >tune.txt
    "$bin" merge rpart.0 rpart.1 >replay_merged.txt
    "$bin" ope --log decisions.log --sweep sweep.csv --policy ucb1:c=0.1,n0=4 --policy auto >ope.txt
    "$bin" model --fabric h100-ib-a --bytes 4096 >model.txt
    "$bin" plan --fabric h100-ib-a --nodes 2 --collectives allreduce --out campaign_text >plan.txt
    "$bin" plan --status campaign >plan_status.txt
    "$bin" ingest nccl_tests.txt --fabric gh200 --out ingested_text.csv >ingest.txt
    "$bin" hipipe --fabric h100-ib-a --bytes 64M >hipipe.txt
    # The log's own bytes name the process that wrote it (pid, start time); what it holds is
    # compared through ope and telemetry above.
    rm -f decisions.log decisions.log.*
  ) 2>"$work/$side.err" || { tail -n 20 "$work/$side.err" >&2; echo "compare_outputs: a command failed on $side" >&2; exit 2; }
}
run before "$work/tree/build" "$work/tree"
run after "$here/build" "$here"

differ=0
while IFS= read -r f; do
  rel=${f#"$work/before/"}
  if [ ! -f "$work/after/$rel" ]; then
    echo "missing after: $rel"; differ=1
  elif cmp -s "$f" "$work/after/$rel"; then
    echo "identical: $rel"
  else
    echo "DIFFERS: $rel"; differ=1
  fi
done < <(find "$work/before" -type f | sort)
while IFS= read -r f; do
  rel=${f#"$work/after/"}
  [ -f "$work/before/$rel" ] || { echo "new after: $rel"; differ=1; }
done < <(find "$work/after" -type f | sort)
if ((differ)); then
  echo "compare_outputs: outputs differ from $rev" >&2
  exit 1
fi
echo "compare_outputs: identical to $rev (${commit:0:12})"
