#!/usr/bin/env python3
"""The coverage study of docs/ope.md: how often the 95% intervals of `ncclbot ope` hold the truth.

For each behaviour policy and seed, the built plugin is driven over one stationary simulated sweep
(`plugin-check --log`, the seed drawing the behaviour's random choices and the sampled latencies);
`ncclbot ope --sweep` then estimates each target and prints the truth. Reported per behaviour,
target and estimator: the mean bias relative to the truth, the RMSE, and the share of seeds whose
interval holds the truth.

Usage: python3 scripts/ope_coverage.py [--build build] [--seeds 40] [--horizon 300] [--out FILE.json]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

BEHAVIOURS = ["random", "egreedy:eps=0.1,decay=0,n0=4", "egreedy:eps=0.3,decay=0,n0=4"]
TARGETS = ["auto", "random", "egreedy:eps=0.5,decay=0,n0=4", "ucb1:c=0.1,n0=1"]


def run(cmd, unsupported_ok=False):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if unsupported_ok and r.returncode == 2 and "zero propensity" in r.stderr:
        return None  # the target plays an arm this log never shows: no estimate exists
    if r.returncode != 0:
        sys.exit(f"ope_coverage: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--horizon", type=int, default=300)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    ncclbot = os.path.join(args.build, "ncclbot")
    plugin = os.path.join(args.build, "libnccl-tuner-ncclbot.so")
    work = tempfile.mkdtemp(prefix="ncclbot-ope-coverage-")
    sweep = os.path.join(work, "sweep.csv")
    run([ncclbot, "synth", "--fabric", "h100-ib-a", "--seed", "3", "--nodes", "4", "--collectives",
         "allreduce,allgather", "--samples", "8", "--observation", "off", "--out", sweep])
    rows, unsupported = {}, {}
    for behaviour in BEHAVIOURS:
        for seed in range(args.seeds):
            log = os.path.join(work, f"log-{seed}.bin")
            if os.path.exists(log):
                os.remove(log)
            run([ncclbot, "plugin-check", "--plugin", plugin, "--sweep", sweep, "--policy", behaviour,
                 "--seed", str(seed), "--horizon", str(args.horizon), "--log", log])
            for t in TARGETS:
                text = run([ncclbot, "ope", "--log", log, "--sweep", sweep, "--seed", str(seed), "--json",
                            "--policy", t], unsupported_ok=True)
                if text is None:
                    unsupported[(behaviour, t)] = unsupported.get((behaviour, t), 0) + 1
                    continue
                doc = json.loads(text)
                p = doc["policies"][0]
                for e in p["estimators"]:
                    truth = e.get("truth_us", p["truth_us"])  # the replay method's truth is its own
                    r = rows.setdefault((behaviour, p["policy"], e["name"]), {"err": [], "hit": 0, "n": 0, "neff": []})
                    r["err"].append((e["value_us"] - truth) / truth)
                    r["hit"] += e["ci"][0] <= truth <= e["ci"][1]
                    r["n"] += 1
                    r["neff"].append(e["n_effective"])
    out = []
    print(f"{'behaviour':30s} {'target':28s} {'est':6s} {'bias %':>8s} {'rmse %':>8s} {'coverage':>9s} "
          f"{'n_eff':>8s} {'runs':>5s}")
    for (behaviour, target, name), r in rows.items():
        bias = sum(r["err"]) / len(r["err"])
        rmse = math.sqrt(sum(x * x for x in r["err"]) / len(r["err"]))
        cov = r["hit"] / r["n"]
        neff = sorted(r["neff"])[len(r["neff"]) // 2]
        out.append({"behaviour": behaviour, "target": target, "estimator": name, "bias": bias, "rmse": rmse,
                    "coverage": cov, "seeds": r["n"], "n_effective_median": neff})
        print(f"{behaviour:30s} {target:28s} {name:6s} {bias * 100:8.2f} {rmse * 100:8.2f} {cov:9.3f} "
              f"{neff:8.0f} {r['n']:5d}")
    for (behaviour, target), n in unsupported.items():
        print(f"{behaviour:30s} {target:28s} unsupported in {n} of {args.seeds} logs (an arm never played)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"seeds": args.seeds, "horizon": args.horizon, "rows": out,
                       "unsupported": [{"behaviour": b, "target": t, "logs": n} for (b, t), n in unsupported.items()]},
                      f, indent=1)


if __name__ == "__main__":
    main()
