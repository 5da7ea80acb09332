#!/usr/bin/env python3
"""Replay throughput of ncclbot against what a user would otherwise write: the same UCB1 replay as
a vectorised NumPy program, and MABWiser's UCB1 driven step by step (predict / partial_fit).

All three replay cold-started UCB1 (c = 0.1 on latencies relative to the best current estimate,
ncclbot's `ucb1:c=0.1,n0=0`; MABWiser's `alpha` on rewards -latency / best-first-probe) on the
same synthetic sweep, the one `ncclbot bench` times (written with `ncclbot bench --write-sweep`),
one thread each. Throughput = replay steps (one select + one update) per second, wall clock and
process CPU time; ratios are ncclbot's rate over the peer's.

Usage (from the repository root, after building):
    python3 scripts/bench_peers.py --ncclbot build/ncclbot [--arms 12] [--json]
Needs numpy and mabwiser (pip install mabwiser).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time


def read_sweep(path):
    import numpy as np
    cells = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            key = (row["collective"], row["nodes"], row["gpus_per_node"], row["bytes"])
            arm = (row["algo"], row["proto"])
            cells.setdefault(key, {}).setdefault(arm, {})[int(row["sample"])] = float(row["time_us"])
    contexts = sorted(cells)
    arms = sorted(cells[contexts[0]])
    samples = len(cells[contexts[0]][arms[0]])
    times = np.empty((len(contexts), len(arms), samples))
    for c, key in enumerate(contexts):
        for a, arm in enumerate(arms):
            for r in range(samples):
                times[c, a, r] = cells[key][arm][r]
    return times


def numpy_ucb1(times, seeds, horizon, c=0.1):
    """Cold UCB1 as in include/ncclbot/policy/ucb1.hpp, vectorised over (context, seed) replays."""
    import numpy as np
    C, K, R = times.shape
    B = C * seeds
    ctx = np.repeat(np.arange(C), seeds)
    means = times.mean(axis=2)
    loss_table = means / means.min(axis=1, keepdims=True) - 1.0
    rng = np.random.default_rng(0)
    counts = np.zeros((B, K))
    sums = np.zeros((B, K))
    loss = np.zeros(B)
    rows = np.arange(B)
    for t in range(horizon):
        if t < K:
            arm = np.full(B, t)
        else:
            mean = sums / counts
            scale = c * mean.min(axis=1) * math.sqrt(2.0 * math.log(t))
            arm = np.argmin(mean - scale[:, None] / np.sqrt(counts), axis=1)
        x = times[ctx, arm, rng.integers(R, size=B)]
        counts[rows, arm] += 1.0
        sums[rows, arm] += x
        loss += loss_table[ctx, arm]
    return B * horizon, float((loss / horizon).mean())


def mabwiser_ucb1(times, replays, horizon, c=0.1):
    import numpy as np
    from mabwiser.mab import MAB, LearningPolicy
    C, K, R = times.shape
    rng = np.random.default_rng(0)
    steps = 0
    for i in range(replays):
        ctx = i % C
        first = [times[ctx, a, rng.integers(R)] for a in range(K)]
        scale = min(first)
        mab = MAB(arms=list(range(K)), learning_policy=LearningPolicy.UCB1(alpha=c), seed=i)
        mab.fit(decisions=list(range(K)), rewards=[-x / scale for x in first])
        steps += K
        for _ in range(horizon - K):
            arm = mab.predict()
            x = times[ctx, arm, rng.integers(R)]
            mab.partial_fit(decisions=[arm], rewards=[-x / scale])
            steps += 1
    return steps


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ncclbot", default="build/ncclbot", help="path of the built ncclbot program")
    ap.add_argument("--arms", type=int, default=12)
    ap.add_argument("--contexts", type=int, default=32)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--horizon", type=int, default=4096)
    ap.add_argument("--mabwiser-replays", type=int, default=2, help="MABWiser is timed on fewer replays")
    ap.add_argument("--mabwiser-horizon", type=int, default=500)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    spec = "ucb1:c=0.1,n0=0"
    with tempfile.TemporaryDirectory() as tmp:
        sweep = os.path.join(tmp, "bench.csv")
        subprocess.run([args.ncclbot, "bench", "--write-sweep", sweep, "--arms", str(args.arms), "--contexts",
                        str(args.contexts)], check=True, stderr=subprocess.DEVNULL)
        times = read_sweep(sweep)
    out = subprocess.run([args.ncclbot, "bench", "--backend", "cpu", "--policy", spec, "--arms", str(args.arms),
                          "--threads", "1", "--contexts", str(args.contexts), "--seeds", str(args.seeds),
                          "--horizon", str(args.horizon), "--json"], check=True, capture_output=True, text=True)
    ours = json.loads(out.stdout)["results"][0]
    rows = [{"implementation": "ncclbot (C++, 1 thread)", "steps_per_s": ours["steps_per_s"],
             "steps_per_cpu_s": ours["steps_per_cpu_s"]}]

    (steps, _), wall, cpu = timed(lambda: numpy_ucb1(times, args.seeds, args.horizon))
    rows.append({"implementation": "NumPy, vectorised over replays", "steps_per_s": steps / wall,
                 "steps_per_cpu_s": steps / cpu})
    try:
        steps, wall, cpu = timed(lambda: mabwiser_ucb1(times, args.mabwiser_replays, args.mabwiser_horizon))
        rows.append({"implementation": "MABWiser UCB1, predict/partial_fit", "steps_per_s": steps / wall,
                     "steps_per_cpu_s": steps / cpu})
    except ImportError:
        print("bench_peers: mabwiser is not installed (pip install mabwiser); skipping it", file=sys.stderr)
    for r in rows:
        r["ncclbot_speedup_wall"] = rows[0]["steps_per_s"] / r["steps_per_s"]
        r["ncclbot_speedup_cpu"] = rows[0]["steps_per_cpu_s"] / r["steps_per_cpu_s"]
    if args.json:
        print(json.dumps({"policy": spec, "arms": args.arms, "results": rows}, indent=2))
    else:
        print(f"UCB1 replay, {args.arms} arms ({spec}); ratio = ncclbot's rate / this rate")
        print(f"{'implementation':40s} {'steps/s':>12s} {'steps/CPU-s':>12s} {'ratio':>9s} {'ratio(CPU)':>10s}")
        for r in rows:
            print(f"{r['implementation']:40s} {r['steps_per_s']:12.3g} {r['steps_per_cpu_s']:12.3g} "
                  f"{r['ncclbot_speedup_wall']:9.1f} {r['ncclbot_speedup_cpu']:10.1f}")


if __name__ == "__main__":
    main()
