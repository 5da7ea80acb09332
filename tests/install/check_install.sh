#!/usr/bin/env bash
# `cmake --install` gives a relocatable tree (docs/install.md), checked end to end:
#   1. install BUILD into a prefix, then move the prefix somewhere else;
#   2. every promised file is there, no private header is, and no binary names the source tree;
#   3. the moved ncclbot runs the quick study from its own share/ncclbot (figures included);
#   4. a project outside this tree builds against find_package(ncclbot): ncclbot::policy alone,
#      and ncclbot::ncclbot, whose replay must equal `ncclbot replay --json` of the same inputs.
# Usage: tests/install/check_install.sh BUILD_DIR    (ctest runs it as Install.MovedPrefix...)
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ncclbot-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "check_install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
P=$work/moved

for f in bin/ncclbot lib/libnccl-tuner-ncclbot.so share/ncclbot/fabrics/h100-ib-a.toml \
  share/ncclbot/hipipe/h100-ib-a.toml share/ncclbot/experiments/quick.toml share/ncclbot/scripts/study_figures.py \
  include/ncclbot/policy/policy.hpp lib/libncclbot.a lib/cmake/ncclbot/ncclbotConfig.cmake; do
  [[ -e $P/$f ]] || fail "the install lacks $f"
done
if [[ -e $build/ncclbot-mpi ]]; then [[ -x $P/bin/ncclbot-mpi ]] || fail "the install lacks bin/ncclbot-mpi"; fi
for private in study report cli plugin; do
  [[ ! -e $P/include/$private && ! -e $P/include/ncclbot/$private ]] || fail "private headers installed: $private"
done
for bin in "$P"/bin/* "$P"/lib/libnccl-tuner-ncclbot.so; do
  if strings "$bin" | grep -F "$src" >/dev/null; then
    fail "$(basename "$bin") names the source tree: $(strings "$bin" | grep -F "$src" | head -3 | tr '\n' ' ')"
  fi
done

# The moved program, run from elsewhere, with nothing pointing it at the source tree, on the installed
# quick study (its loss-vs-horizon replays cut to 100 calls: their length is the study tests' matter,
# and to 10^5 calls they took a third of this check).
cd "$work"
sed 's/^\[study\]$/[study]\nloss_vs_horizon = [100]/' "$P/share/ncclbot/experiments/quick.toml" >"$work/quick.toml"
grep -q '^loss_vs_horizon = \[100\]$' "$work/quick.toml" || fail "the installed quick.toml has no [study] table"
env -u NCCLBOT_DATA_DIR -u NCCLBOT_FIGURE_SCRIPT -u NCCLBOT_HIPIPE_FABRICS \
  "$P/bin/ncclbot" run "$work/quick.toml" --out "$work/quick" >"$work/run.log" 2>&1 ||
  fail "the moved ncclbot could not run the quick study: $(tail -5 "$work/run.log")"
[[ -s $work/quick/report.html ]] || fail "no report.html"
ls "$work"/quick/figures/*.png >/dev/null 2>&1 || fail "no figures (the installed figure script was not found): $(grep -i figure "$work/run.log")"
"$P/bin/ncclbot" hipipe --fabric h100-ib-a --bytes 1048576 --json >/dev/null || fail "hipipe presets not found"

# A project outside the tree.
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$P" >"$work/consumer.log" 2>&1 || fail "configuring the consumer failed: $(tail -20 "$work/consumer.log")"
cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 || fail "building the consumer failed: $(tail -30 "$work/consumer.log")"
"$work/consumer/embedded_policy" || fail "the embedded UCB1 did not settle on the fastest arm"
"$P/bin/ncclbot" synth --fabric h100-ib-a --nodes 4 --collectives allreduce --out "$work/s.csv" 2>/dev/null
spec='ucb1:c=0.1,n0=4'
mine=$("$work/consumer/library_replay" "$work/s.csv" "$spec" 3 200)
theirs=$("$P/bin/ncclbot" replay --sweep "$work/s.csv" --policy "$spec" --seeds 3 --horizon 200 --json 2>/dev/null |
  python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["configs"][0]["online"]["mean"]))')
python3 -c "import sys; sys.exit(0 if float('$mine') == float('$theirs') else 1)" ||
  fail "the library's replay ($mine) differs from ncclbot replay's ($theirs)"
echo "check_install: moved prefix runs the quick study; external project builds; library replay $mine == CLI"
