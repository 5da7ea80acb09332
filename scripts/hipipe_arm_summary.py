#!/ usr / bin / env python3
""
        "What the simulated HiPIPE arm adds and whether the policies find it, from a finished study.

        Usage
    : python3 scripts /
      hipipe_arm_summary.py DIR[--json](DIR
                                        : the-- out folder of `ncclbot run experiments /
                                              hipipe_arm.toml-- out DIR`)

          Reads DIR
      /
      results.json(each policy's modal final arm per scored context, its mean online and final loss) and
    DIR / sweeps/*.csv (the measured samples), and prints per scenario and pooled:
  - contexts with the HiPIPE arm, and in how many HiPIPE has the lowest measured mean;
  - the mean and largest gain of HiPIPE over the best NCCL arm where it wins, 1 - mu_HiPIPE / mu_NCCL*;
  - per policy: recall (share of HiPIPE-best contexts whose final arm is HiPIPE), false picks
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
        for row in csv.DictReader(f):
            key = (row["fabric"], row["collective"], int(row["nodes"]), int(row["gpus_per_node"]), int(row["bytes"]))
            cell = sums[key][row["algo"] + "/" + row["proto"]]
            cell[0] += float(row["time_us"])
            cell[1] += 1
    return {k: {a: s / n for a, (s, n) in arms.items()} for k, arms in sums.items()}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    out = args[0]
    results = json.load(open(out + "/results.json"))
    means = {}
    for sw in results["sweeps"]:
        means[sw["name"]] = sweep_means(out + "/" + sw["file"])

    summary = {"scenarios": {}, "pooled": None}
    pooled = defaultdict(list)
    for sc in results["scenarios"]:
        name = sc["name"]
        score = sc["score"]
        ctxs = [(c["fabric"], c["collective"], c["nodes"], c["gpus_per_node"], c["bytes"]) for c in score["context_list"]]
        m = means[score["sweep"]]
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
            if s["scenario"] != name:
                continue
            picks = [i for i, d in enumerate(s["decisions"]) if d == HIPIPE]
            policies[s["policy"]] = {
                "recall": sum(1 for i in picks if i in best) / len(best) if best else None,
                "found": sum(1 for i in picks if i in best),
                "false_picks": sum(1 for i in picks if i not in best),
                "mean_online": sum(s["online"]) / len(s["online"]),
                "mean_final": sum(s["final"]) / len(s["final"]),
            }
            pooled[s["policy"]].append((len(best), policies[s["policy"]], len(s["online"])))
        summary["scenarios"][name] = {
            "contexts": len(ctxs),
            "with_hipipe": len(with_arm),
            "hipipe_best": len(best),
            "mean_gain_where_best": sum(gains) / len(gains) if gains else None,
            "max_gain": max(gains) if gains else None,
            "policies": policies,
        }
    total_best = sum(v["hipipe_best"] for v in summary["scenarios"].values())
    pooled_policies = {}
    for p, rows in pooled.items():
        n = sum(r[2] for r in rows)
        pooled_policies[p] = {
            "recall": sum(r[1]["found"] for r in rows) / total_best if total_best else None,
            "found": sum(r[1]["found"] for r in rows),
            "false_picks": sum(r[1]["false_picks"] for r in rows),
            "mean_online": sum(r[1]["mean_online"] * r[2] for r in rows) / n,
            "mean_final": sum(r[1]["mean_final"] * r[2] for r in rows) / n,
        }
    all_gains = []
    for sc in results["scenarios"]:
        score = sc["score"]
        m = means[score["sweep"]]
        for c in score["context_list"]:
            arms = m[(c["fabric"], c["collective"], c["nodes"], c["gpus_per_node"], c["bytes"])]
            if HIPIPE in arms:
                nccl_best = min(v for a, v in arms.items() if a != HIPIPE)
                if arms[HIPIPE] < nccl_best:
                    all_gains.append(1.0 - arms[HIPIPE] / nccl_best)
    summary["pooled"] = {
        "contexts": sum(v["contexts"] for v in summary["scenarios"].values()),
        "with_hipipe": sum(v["with_hipipe"] for v in summary["scenarios"].values()),
        "hipipe_best": total_best,
        "mean_gain_where_best": sum(all_gains) / len(all_gains) if all_gains else None,
        "max_gain": max(all_gains) if all_gains else None,
        "policies": pooled_policies,
    }
    if "--json" in sys.argv:
        json.dump(summary, sys.stdout, indent=1, sort_keys=True)
        print()
        return

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    for name, v in list(summary["scenarios"].items()) + [("pooled", summary["pooled"])]:
        print(f"{name}: {v['contexts']} scored contexts, {v['with_hipipe']} with HiPIPE, HiPIPE best in "
              f"{v['hipipe_best']}; gain where best: mean {pct(v['mean_gain_where_best'])}, max {pct(v['max_gain'])}")
        for p, q in v["policies"].items():
            print(f"  {p:14s} finds {q['found']:3d} ({pct(q['recall'])}), false picks {q['false_picks']:3d}, "
                  f"mean online loss {pct(q['mean_online'])}, final {pct(q['mean_final'])}")


if __name__ == "__main__":
    main()
