#!/usr/bin/env python3
"""GPU peers of `ncclbot bench --backend cuda`: the same UCB1 replay (12 arms, warm start n0 = 1
from the prior, c = 0.1, one latency sample drawn per step) written as a user would write it in
JAX (vmap over replays, lax.scan over steps, jit-compiled) and, if installed, in CuPy (arrays over
replays, a Python loop over steps), on the same sweep, side by side with ncclbot's kernels.

The peers implement the policy of include/ncclbot/policy/ucb1.hpp with their library's own log,
sqrt and random numbers: they do the same work per step, not the same bits, so only throughput is
compared. Steps/s = replays x horizon / wall time of one run after a warm-up (compilation excluded).

Usage (on a GPU machine with JAX and/or CuPy; JAX also runs on a CPU for a functional check):
  scripts/bench_peers_gpu.py --ncclbot gpu-bundle/bin/ncclbot [--seeds 256] [--horizon 1024] [--json]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ALGOS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = ["LL", "LL128", "Simple"]
NUM_ARMS = 21


def load_sweep(path):
    """Dense arrays of a sweep CSV: times [C, 21, R] (NaN where invalid), prior [C, 21], valid [C, 21]."""
    rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
    keys = sorted({(r["collective"], int(r["nodes"]), int(r["gpus_per_node"]), int(r["bytes"])) for r in rows})
    index = {k: i for i, k in enumerate(keys)}
    samples = 1 + max(int(r["sample"]) for r in rows)
    times = np.full((len(keys), NUM_ARMS, samples), np.nan)
    prior = np.full((len(keys), NUM_ARMS), -1.0)
    for r in rows:
        c = index[(r["collective"], int(r["nodes"]), int(r["gpus_per_node"]), int(r["bytes"]))]
        s = ALGOS.index(r["algo"]) * 3 + PROTOS.index(r["proto"])
        times[c, s, int(r["sample"])] = float(r["time_us"])
        if r.get("prior_us"):
            prior[c, s] = float(r["prior_us"])
    valid = ~np.isnan(times[:, :, 0])
    return times, prior, valid


def relative_losses(times, valid):
    measured = np.maximum((~np.isnan(times)).sum(axis=2), 1)
    mean = np.where(valid, np.nansum(times, axis=2) / measured, np.inf)
    return np.where(valid, mean / mean.min(axis=1, keepdims=True) - 1.0, 0.0)


def jax_replay(times, prior, valid, seeds, horizon, c=0.1, n0=1.0):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    loss = jnp.asarray(relative_losses(times, valid))
    t_arr, v_arr = jnp.asarray(np.nan_to_num(times)), jnp.asarray(valid)
    p_arr = jnp.asarray(prior)
    contexts, samples = times.shape[0], times.shape[2]

    def one(ctx, key):
        has_prior = v_arr[ctx] & (p_arr[ctx] > 0)
        count = jnp.where(has_prior, n0, 0.0)
        total_sum = jnp.where(has_prior, n0 * p_arr[ctx], 0.0)

        def step(state, t):
            count, total_sum, loss_sum = state
            untried = v_arr[ctx] & (count == 0)
            mean = jnp.where(count > 0, total_sum / jnp.maximum(count, 1e-300), jnp.inf)
            best = jnp.min(jnp.where(v_arr[ctx], mean, jnp.inf))
            bonus = c * best * jnp.sqrt(2.0 * jnp.log(jnp.sum(count))) / jnp.sqrt(jnp.maximum(count, 1e-300))
            index = jnp.where(v_arr[ctx], mean - bonus, jnp.inf)
            arm = jnp.where(jnp.any(untried), jnp.argmax(untried), jnp.argmin(index))
            r = jax.random.randint(jax.random.fold_in(key, t), (), 0, samples)
            x = t_arr[ctx, arm, r]
            count = count.at[arm].add(1.0)
            total_sum = total_sum.at[arm].add(x)
            return (count, total_sum, loss_sum + loss[ctx, arm]), None

        (_, _, loss_sum), _ = jax.lax.scan(step, (count, total_sum, 0.0), jnp.arange(horizon))
        return loss_sum / horizon

    ctx_ids = jnp.repeat(jnp.arange(contexts), seeds)
    keys = jax.random.split(jax.random.PRNGKey(0), contexts * seeds)
    run = jax.jit(jax.vmap(one))
    run(ctx_ids, keys).block_until_ready()  # compile and warm up
    start = time.perf_counter()
    out = run(ctx_ids, keys).block_until_ready()
    elapsed = time.perf_counter() - start
    return contexts * seeds * horizon / elapsed, float(np.mean(np.asarray(out))), jax.devices()[0].platform


def cupy_replay(times, prior, valid, seeds, horizon, c=0.1, n0=1.0):
    import cupy as cp

    contexts, samples = times.shape[0], times.shape[2]
    loss = cp.asarray(relative_losses(times, valid))
    t_arr, v_arr, p_arr = cp.asarray(np.nan_to_num(times)), cp.asarray(valid), cp.asarray(prior)
    ctx = cp.repeat(cp.arange(contexts), seeds)
    n = ctx.size
    rng = cp.random.default_rng(0)

    def run():
        has_prior = v_arr[ctx] & (p_arr[ctx] > 0)
        count = cp.where(has_prior, n0, 0.0)
        total_sum = cp.where(has_prior, n0 * p_arr[ctx], 0.0)
        loss_sum = cp.zeros(n)
        rows = cp.arange(n)
        for _ in range(horizon):
            untried = v_arr[ctx] & (count == 0)
            mean = cp.where(count > 0, total_sum / cp.maximum(count, 1e-300), cp.inf)
            best = cp.min(cp.where(v_arr[ctx], mean, cp.inf), axis=1, keepdims=True)
            bonus = c * best * cp.sqrt(2.0 * cp.log(count.sum(axis=1, keepdims=True))) / cp.sqrt(cp.maximum(count, 1e-300))
            index = cp.where(v_arr[ctx], mean - bonus, cp.inf)
            arm = cp.where(untried.any(axis=1), cp.argmax(untried, axis=1), cp.argmin(index, axis=1))
            r = rng.integers(0, samples, size=n)
            x = t_arr[ctx, arm, r]
            count[rows, arm] += 1.0
            total_sum[rows, arm] += x
            loss_sum += loss[ctx, arm]
        return loss_sum / horizon

    run()
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    out = run()
    cp.cuda.Device().synchronize()
    return n * horizon / (time.perf_counter() - start), float(out.mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ncclbot", default="gpu-bundle/bin/ncclbot")
    ap.add_argument("--contexts", type=int, default=480)
    ap.add_argument("--seeds", type=int, default=256)
    ap.add_argument("--horizon", type=int, default=1024)
    ap.add_argument("--cpu-ok", action="store_true", help="run the peers even without a GPU (functional check)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        sweep = os.path.join(tmp, "bench12.csv")
        subprocess.run([a.ncclbot, "bench", "--arms", "12", "--contexts", str(a.contexts), "--write-sweep", sweep],
                       check=True, stderr=subprocess.DEVNULL)
        times, prior, valid = load_sweep(sweep)

    results = []
    proc = subprocess.run([a.ncclbot, "bench", "--backend", "cuda", "--policy", "ucb1", "--arms", "12", "--contexts",
                           str(a.contexts), "--seeds", str(a.seeds), "--horizon", str(a.horizon), "--repetitions", "3",
                           "--json"], capture_output=True, text=True)
    if proc.returncode == 0:
        results.append({"peer": "ncclbot cuda", "steps_per_s": json.loads(proc.stdout)["results"][0]["steps_per_s"]})
    else:
        print(f"ncclbot bench --backend cuda: {proc.stderr.strip()}", file=sys.stderr)
    try:
        rate, mean_loss, platform = jax_replay(times, prior, valid, a.seeds, a.horizon)
        if platform == "gpu" or a.cpu_ok:
            results.append({"peer": f"jax vmap ({platform})", "steps_per_s": rate, "mean_online_loss": mean_loss})
        else:
            print("jax: no GPU platform (use --cpu-ok for a functional check)", file=sys.stderr)
    except ImportError:
        print("jax: not installed", file=sys.stderr)
    try:
        rate, mean_loss = cupy_replay(times, prior, valid, a.seeds, a.horizon)
        results.append({"peer": "cupy", "steps_per_s": rate, "mean_online_loss": mean_loss})
    except ImportError:
        print("cupy: not installed", file=sys.stderr)

    base = next((r["steps_per_s"] for r in results if r["peer"] == "ncclbot cuda"), None)
    for r in results:
        r["ncclbot_cuda_over_peer"] = base / r["steps_per_s"] if base else None
    workload = {"contexts": a.contexts, "seeds": a.seeds, "horizon": a.horizon, "arms": 12, "policy": "ucb1:c=0.1,n0=1"}
    if a.json:
        print(json.dumps({"workload": workload, "results": results}, indent=2))
    else:
        print(f"{'peer':<24} {'steps/s':>12} {'ncclbot/peer':>13}")
        for r in results:
            ratio = f"{r['ncclbot_cuda_over_peer']:.1f}" if r["ncclbot_cuda_over_peer"] else "-"
            print(f"{r['peer']:<24} {r['steps_per_s']:>12.3g} {ratio:>13}")
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
