#!/usr/bin/env bash
# Replay steps/s of greedy, UCB1, Thompson and e-greedy (12 arms, the bench sweep) built from
# revision REV's headers and from the working tree's, run alternately ROUNDS times on this machine.
# Usage: scripts/replay_speed_vs_rev.sh REV [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/replay_speed_vs_rev.sh REV [ROUNDS]}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rev"
git archive "$rev" include src | tar -x -C "$work/rev"
build() {  # tree output
  local defs=()
  grep -q "exploration_aids" "$1/include/ncclbot/replay/exploration_table.hpp" && defs=(-DNCCLBOT_SELECT_AIDS)
  g++ -std=c++20 -O3 -DNDEBUG -ffp-contract=off "${defs[@]}" -I"$1/include" -I"$1/src" scripts/replay_speed_driver.cpp \
    "$1/src/bench/bench_sweep.cpp" "$1/src/core/sweep.cpp" "$1/src/core/names.cpp" "$1/src/replay/exploration_table.cpp" \
    -o "$2"
}
build "$work/rev" "$work/at_rev"
build "$PWD" "$work/now"
for ((i = 0; i < rounds; ++i)); do
  echo "$rev: $("$work/at_rev" | tail -1)"
  echo "now: $("$work/now" | tail -1)"
done
