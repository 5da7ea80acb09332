#!/usr/bin/env python3
"""Times ncclbot's statistics engine against SciPy on the same inputs and prints the ratio.

Command (from the repository root, after building, e.g. into build/):
    python3 scripts/bench_stats.py --ncclbot build/ncclbot [--threads 1] [--repeat 5] [--json OUT.json]
        [--before OTHER/ncclbot]

Inputs (fixed seed): 10,000 loss-like contexts bootstrapped 10,000 times (mean and p99, percentile
and BCa), and 20 paired differences tested exactly (2^20 sign vectors). SciPy runs
scipy.stats.bootstrap(..., vectorized=True) and scipy.stats.permutation_test(...,
permutation_type="samples", n_resamples=inf) with default batching; ncclbot runs
`ncclbot bench-stats` on the very same JSON. Each side: one warm-up, then --repeat timed runs,
median reported. --before times a second build (say, of an earlier revision) in the same run and
adds its speed-ups over SciPy, for a before/after comparison on one machine state. Needs numpy and scipy (scripts/setup.sh installs them).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.stats as st


def make_inputs(n_contexts=10000, n_diffs=20, resamples=10000):
    rng = np.random.default_rng(20261129)
    x = np.round(rng.exponential(0.05, n_contexts) * (rng.uniform(size=n_contexts) < 0.8), 5)
    d = np.round(rng.normal(0.1, 1.0, n_diffs), 4)
    return x, d, resamples


def time_median(fn, repeat):
    """Median wall and process-CPU seconds (CPU time is steadier on a shared machine)."""
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return statistics.median(wall), statistics.median(cpu)


def scipy_cases(x, d, resamples, repeat):
    out = {}
    stats = {"mean": lambda a, axis=-1: np.mean(a, axis=axis),
             "p99": lambda a, axis=-1: np.percentile(a, 99, axis=axis)}
    for name, f in stats.items():
        for method, scipy_method in (("percentile", "percentile"), ("bca", "BCa")):
            key = f"bootstrap_{name}_{method}"
            out[key] = time_median(lambda: st.bootstrap((x,), f, n_resamples=resamples, method=scipy_method,
                                                         vectorized=True, rng=np.random.default_rng(1)), repeat)
            print(f"scipy {key}: median {out[key][0]:.3f} s wall, {out[key][1]:.3f} s CPU", file=sys.stderr)
    out["permutation_exact"] = time_median(
        lambda: st.permutation_test((d,), lambda a, axis=-1: np.mean(a, axis=axis), permutation_type="samples",
                                    n_resamples=np.inf, vectorized=True), repeat)
    print(f"scipy permutation_exact: median {out['permutation_exact'][0]:.3f} s wall", file=sys.stderr)
    return out


def ncclbot_cases(binary, path, args):
    """Median (wall, CPU) seconds per case of `binary bench-stats` on the input file."""
    run = subprocess.run([binary, "bench-stats", "--input", path, "--repeat", str(args.repeat), "--threads",
                          str(args.threads)], check=True, capture_output=True, text=True)
    return {r["name"]: (r["median_s"], r["median_cpu_s"]) for r in json.loads(run.stdout)["results"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ncclbot", default="build/ncclbot")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="also write the table as JSON here")
    ap.add_argument("--before", help="another ncclbot binary to time in the same run, e.g. an earlier build")
    args = ap.parse_args()

    x, d, resamples = make_inputs()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench_input.json")
        with open(path, "w") as f:
            json.dump({"x": x.tolist(), "diffs": d.tolist(), "resamples": resamples}, f)
        ours = ncclbot_cases(args.ncclbot, path, args)
        before = ncclbot_cases(args.before, path, args) if args.before else None
    theirs = scipy_cases(x, d, resamples, args.repeat)

    rows = []
    print(f"{'case':<26} {'ncclbot wall':>12} {'scipy wall':>11} {'speed-up':>9} {'ncclbot CPU':>12} "
          f"{'scipy CPU':>10} {'speed-up':>9}")
    for name in theirs:
        (ow, oc), (tw, tc) = ours[name], theirs[name]
        rw = tw / ow if ow > 0 else float("inf")
        rc = tc / oc if oc > 0 else float("inf")
        rows.append({"case": name, "ncclbot_wall_s": ow, "scipy_wall_s": tw, "speedup_wall": rw,
                     "ncclbot_cpu_s": oc, "scipy_cpu_s": tc, "speedup_cpu": rc})
        print(f"{name:<26} {ow:>12.4f} {tw:>11.4f} {rw:>8.1f}x {oc:>12.4f} {tc:>10.4f} {rc:>8.1f}x")
        if before:
            bw, bc = before[name]
            rows[-1].update({"before_wall_s": bw, "before_cpu_s": bc})
            print(f"{'  before':<26} {bw:>12.4f} {'':>11} {tw / bw if bw > 0 else float('inf'):>8.1f}x {bc:>12.4f} "
                  f"{'':>10} {tc / bc if bc > 0 else float('inf'):>8.1f}x")
    print(f"(ncclbot threads={args.threads}, medians of {args.repeat} runs; scipy {scipy.__version__}, "
          f"numpy {np.__version__}; contexts={len(x)}, resamples={resamples}, diffs={len(d)})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "repeat": args.repeat, "scipy": scipy.__version__, "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
