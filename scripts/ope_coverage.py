#!/usr/bin/env python3
"""The coverage study of docs/ope.md: how often the 95% intervals of `ncclbot ope` hold the truth.

For each fabric, behaviour policy and seed, the built plugin is driven over one simulated sweep
(`plugin-check --log`, the seed drawing the behaviour's random choices and the sampled latencies);
`ncclbot ope --sweep` then estimates each target and prints the truth, once with blocks of one call
(`--block-length 1`, the call-level bootstrap) and once with the automatic blocks. Fabrics: a
stationary one, and a drifting one (level shifts shared by every arm, a change point every 100
calls on average, levels within +-20%; the truth then is each target's mean latency at the logged
calls' levels). Behaviours: uniform random, and learning ones that adapt to what they measure
(epsilon-greedy with a fixed and with a decaying rate, Thompson sampling). Reported per fabric,
behaviour, target and estimator: the mean bias relative to the truth, the RMSE, and the share of
logs whose interval holds the truth, call-level and block side by side. With --knobs the sweeps are
knob sweeps (synth --knobs), the plugin decides over the knob arms and `ope` reads its knob-mode logs
(docs/ope.md "Knob logs").

Usage: python3 scripts/ope_coverage.py [--build build] [--seeds 40] [--horizon 300] [--samples 8]
       [--fabrics stationary,drifting] [--behaviours 'SPEC;...'] [--targets 'SPEC;...'] [--knobs SPEC]
       [--out FILE.json]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

FABRICS = {
    "stationary": ["--observation", "off"],
    "drifting": ["--observation", "on", "--warmup", "off", "--drift", "on", "--shift-rate", "0.01",
                 "--shift-size", "0.2", "--shift-arm-size", "0"],
}
BEHAVIOURS = ["random", "egreedy:eps=0.3,decay=0,n0=4", "egreedy:eps=0.5,decay=0.02,n0=4",
              "thompson:n0=1,sigma=0.3"]
TARGETS = ["auto", "random", "egreedy:eps=0.5,decay=0,n0=4", "ucb1:c=0.1,n0=1"]
BLOCKS = ["1", "auto"]


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
    ap.add_argument("--samples", type=int, default=8, help="samples per arm of the simulated sweeps")
    ap.add_argument("--fabrics", default=",".join(FABRICS), help="comma-separated, of: " + ", ".join(FABRICS))
    ap.add_argument("--behaviours", default=";".join(BEHAVIOURS), help="policy specs separated by ';'")
    ap.add_argument("--targets", default=";".join(TARGETS), help="target specs separated by ';'")
    ap.add_argument("--knobs", default="", help="synth --knobs: knob sweeps and knob-mode logs")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    ncclbot = os.path.join(args.build, "ncclbot")
    plugin = os.path.join(args.build, "libnccl-tuner-ncclbot.so")
    work = tempfile.mkdtemp(prefix="ncclbot-ope-coverage-")
    rows, unsupported = {}, {}
    behaviours, targets = args.behaviours.split(";"), args.targets.split(";")
    for fabric in args.fabrics.split(","):
        fabric_args = FABRICS[fabric]
        sweep = os.path.join(work, f"sweep-{fabric}.csv")
        run([ncclbot, "synth", "--fabric", "h100-ib-a", "--seed", "3", "--nodes", "4", "--collectives",
             "allreduce,allgather", "--samples", str(args.samples), *fabric_args,
             *(["--knobs", args.knobs] if args.knobs else []), "--out", sweep])
        for behaviour in behaviours:
            for seed in range(args.seeds):
                log = os.path.join(work, f"log-{seed}.bin")
                if os.path.exists(log):
                    os.remove(log)
                run([ncclbot, "plugin-check", "--plugin", plugin, "--sweep", sweep, "--policy", behaviour,
                     "--seed", str(seed), "--horizon", str(args.horizon), "--log", log])
                for t in targets:
                    for block in BLOCKS:
                        text = run([ncclbot, "ope", "--log", log, "--sweep", sweep, "--seed", str(seed), "--json",
                                    "--block-length", block, "--policy", t], unsupported_ok=True)
                        if text is None:
                            if block == BLOCKS[0]:
                                key = (fabric, behaviour, t)
                                unsupported[key] = unsupported.get(key, 0) + 1
                            continue
                        doc = json.loads(text)
                        p = doc["policies"][0]
                        for e in p["estimators"]:
                            if e["name"] == "replay" and (block != "auto" or "truth_us" not in e):
                                continue  # its interval is no bootstrap; a truth only without dynamics
                            truth = e.get("truth_us", p["truth_us"])  # the replay method's truth is its own
                            r = rows.setdefault((fabric, behaviour, p["policy"], e["name"]), {
                                "err": [], "n": 0, "neff": [], "hit": {}, "width": {}})
                            if block == BLOCKS[-1]:
                                r["err"].append((e["value_us"] - truth) / truth)
                                r["n"] += 1
                                r["neff"].append(e["n_effective"])
                            r["hit"][block] = r["hit"].get(block, 0) + (e["ci"][0] <= truth <= e["ci"][1])
                            r["width"].setdefault(block, []).append((e["ci"][1] - e["ci"][0]) / truth)
    out = []
    print(f"{'fabric':10s} {'behaviour':30s} {'target':28s} {'est':6s} {'bias %':>8s} {'rmse %':>8s} "
          f"{'cover 1':>8s} {'cover auto':>10s} {'width ratio':>11s} {'logs':>5s}")
    for (fabric, behaviour, target, name), r in rows.items():
        if r["n"] == 0:
            continue
        bias = sum(r["err"]) / len(r["err"])
        rmse = math.sqrt(sum(x * x for x in r["err"]) / len(r["err"]))
        cover = {b: r["hit"].get(b, 0) / r["n"] for b in BLOCKS if b in r["width"]}
        widths = {b: sorted(w)[len(w) // 2] for b, w in r["width"].items()}
        ratio = widths["auto"] / widths["1"] if "1" in widths and widths["1"] > 0 else float("nan")
        neff = sorted(r["neff"])[len(r["neff"]) // 2]
        out.append({"fabric": fabric, "behaviour": behaviour, "target": target, "estimator": name,
                    "bias": bias, "rmse": rmse, "coverage_call_level": cover.get("1"),
                    "coverage_block": cover.get("auto"), "median_width_block_over_call_level": ratio,
                    "logs": r["n"], "n_effective_median": neff})
        c1 = f"{cover['1']:8.3f}" if "1" in cover else f"{'-':>8s}"
        print(f"{fabric:10s} {behaviour:30s} {target:28s} {name:6s} {bias * 100:8.2f} {rmse * 100:8.2f} "
              f"{c1} {cover['auto']:10.3f} {ratio:11.2f} {r['n']:5d}")
    for (fabric, behaviour, target), n in unsupported.items():
        print(f"{fabric:10s} {behaviour:30s} {target:28s} unsupported in {n} of {args.seeds} logs "
              "(an arm never played)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"seeds": args.seeds, "horizon": args.horizon, "samples": args.samples, "knobs": args.knobs,
                   "rows": out,
                       "unsupported": [{"fabric": fb, "behaviour": b, "target": t, "logs": n}
                                       for (fb, b, t), n in unsupported.items()]},
                      f, indent=1)


if __name__ == "__main__":
    main()
