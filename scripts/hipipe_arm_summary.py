#!/usr/bin/env python3
"""What the simulated HiPIPE arm adds and whether the policies find it, from a finished study.

Usage: python3 scripts/hipipe_arm_summary.py DIR [--json]
       (DIR: the --out folder of `ncclbot run experiments/hipipe_arm.toml --out DIR`)

Reads DIR/results.json (each policy's modal final arm per scored context, its mean online and
final loss) and DIR/sweeps/*.csv (the measured samples), and prints per scenario and pooled:
  - contexts with the HiPIPE arm, and in how many HiPIPE has the lowest measured mean;
  - the mean and largest gain of HiPIPE over the best NCCL arm where it wins, 1 - mu_HiPIPE / mu_NCCL*;
  - the message sizes where it wins;
  - per policy: found (HiPIPE-best contexts whose final arm is HiPIPE) and recall, false picks
    (contexts where the final arm is HiPIPE but HiPIPE is not the best), mean online and final loss.
Standard library only.
"""
import csv
import json
import sys
from collections import defaultdict

HIPIPE = "HiPIPE/Simple"


def sweep_means(path):
    sums = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    with open(path, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            key = (row["fabric"], row["collective"], int(row["nodes"]), int(row["gpus_per_node"]), int(row["bytes"]))
            cell = sums[key][row["algo"] + "/" + row["proto"]]
            cell[0] += float(row["time_us"])
            cell[1] += 1
    return {k: {a: s / n for a, (s, n) in arms.items()} for k, arms in sums.items()}


def context_key(c):
    return (c["fabric"], c["collective"], c["nodes"], c["gpus_per_node"], c["bytes"])


def scenario_summary(results, sc, means):
    score = sc["score"]
    m = means[score["sweep"]]
    ctxs = [context_key(c) for c in score["context_list"]]
    with_arm = [i for i, k in enumerate(ctxs) if HIPIPE in m[k]]
    gains, best = [], set()
    for i in with_arm:
        arms = m[ctxs[i]]
        nccl_best = min(v for a, v in arms.items() if a != HIPIPE)
        if arms[HIPIPE] < nccl_best:
            best.add(i)
            gains.append(1.0 - arms[HIPIPE] / nccl_best)
    policies = {}
    for s in results["scores"]:
        if s["scenario"] != sc["name"]:
            continue
        picks = [i for i, d in enumerate(s["decisions"]) if d == HIPIPE]
        found = sum(1 for i in picks if i in best)
        policies[s["policy"]] = {
            "found": found,
            "recall": found / len(best) if best else None,
            "false_picks": len(picks) - found,
            "mean_online": sum(s["online"]) / len(s["online"]),
            "mean_final": sum(s["final"]) / len(s["final"]),
            "n": len(s["online"]),
        }
    sizes = sorted({ctxs[i][4] for i in best})
    return {
        "contexts": len(ctxs),
        "with_hipipe": len(with_arm),
        "hipipe_best": len(best),
        "gains": gains,
        "smallest_winning_bytes": sizes[0] if sizes else None,
        "policies": policies,
    }


def pooled_summary(parts):
    out = {
        "contexts": sum(p["contexts"] for p in parts),
        "with_hipipe": sum(p["with_hipipe"] for p in parts),
        "hipipe_best": sum(p["hipipe_best"] for p in parts),
        "gains": [g for p in parts for g in p["gains"]],
        "smallest_winning_bytes": min((p["smallest_winning_bytes"] for p in parts if p["smallest_winning_bytes"]),
                                      default=None),
        "policies": {},
    }
    for name in parts[0]["policies"]:
        rows = [p["policies"][name] for p in parts]
        n = sum(r["n"] for r in rows)
        found = sum(r["found"] for r in rows)
        out["policies"][name] = {
            "found": found,
            "recall": found / out["hipipe_best"] if out["hipipe_best"] else None,
            "false_picks": sum(r["false_picks"] for r in rows),
            "mean_online": sum(r["mean_online"] * r["n"] for r in rows) / n,
            "mean_final": sum(r["mean_final"] * r["n"] for r in rows) / n,
            "n": n,
        }
    return out


def finish(part):
    g = part.pop("gains")
    part["mean_gain_where_best"] = sum(g) / len(g) if g else None
    part["max_gain"] = max(g) if g else None
    return part


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    out = args[0]
    with open(out + "/results.json") as f:
        results = json.load(f)
    means = {sw["name"]: sweep_means(out + "/" + sw["file"]) for sw in results["sweeps"]}
    parts = {sc["name"]: scenario_summary(results, sc, means) for sc in results["scenarios"]}
    pooled = pooled_summary(list(parts.values()))
    summary = {"scenarios": {k: finish(v) for k, v in parts.items()}, "pooled": finish(pooled)}
    if "--json" in sys.argv:
        json.dump(summary, sys.stdout, indent=1, sort_keys=True)
        print()
        return

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    for name, v in list(summary["scenarios"].items()) + [("pooled", summary["pooled"])]:
        smallest = v["smallest_winning_bytes"]
        print(f"{name}: {v['contexts']} scored contexts, {v['with_hipipe']} with HiPIPE, HiPIPE best in "
              f"{v['hipipe_best']} (from {smallest >> 20 if smallest else '-'} MiB up); gain over the best NCCL "
              f"arm where it wins: mean {pct(v['mean_gain_where_best'])}, max {pct(v['max_gain'])}")
        for p, q in v["policies"].items():
            print(f"  {p:14s} final arm HiPIPE where best {q['found']:3d} ({pct(q['recall'])}), false picks "
                  f"{q['false_picks']:3d}, mean online loss {pct(q['mean_online'])}, final {pct(q['mean_final'])}")


if __name__ == "__main__":
    main()
