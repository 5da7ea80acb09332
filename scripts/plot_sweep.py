#!/usr/bin/env python3
"""Plot nccl-tests busbw vs message size per arm from a sweep CSV (one figure per collective/node count).

Usage (the figures in docs/figures were made with exactly these commands):
  build/ncclbot synth --fabric h100-ib-a --seed 20260 --nodes 1,16 --out /tmp/h100-ib-a.csv
  python3 scripts/plot_sweep.py /tmp/h100-ib-a.csv --out docs/figures --nodes 1,16

busbw follows nccl-tests: algbw = size / time, busbw = algbw * 2(n-1)/n for all_reduce and (n-1)/n
for all_gather / reduce_scatter (n = nodes * gpus_per_node). The mean of each arm's samples is
plotted; the arm AUTO picks (argmin of prior_us) is drawn as black dots.
"""
import argparse
import collections
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bus_factor(collective, ranks):
    return 2.0 * (ranks - 1) / ranks if collective == "AllReduce" else (ranks - 1) / ranks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep")
    ap.add_argument("--out", default="docs/figures")
    ap.add_argument("--nodes", default="", help="only these node counts, e.g. 1,16")
    args = ap.parse_args()
    keep = {int(x) for x in args.nodes.split(",") if x}
    times = collections.defaultdict(list)
    prior = {}
    fabric = None
    with open(args.sweep) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            n = int(r["nodes"])
            if keep and n not in keep:
                continue
            fabric = r["fabric"]
            key = (r["collective"], n, int(r["gpus_per_node"]))
            arm = r["algo"] + "/" + r["proto"]
            times[(key, arm, int(r["bytes"]))].append(float(r["time_us"]))
            if r.get("prior_us"):
                prior[(key, arm, int(r["bytes"]))] = float(r["prior_us"])
    series = collections.defaultdict(lambda: collections.defaultdict(list))
    for (key, arm, b), ts in times.items():
        series[key][arm].append((b, sum(ts) / len(ts)))
    os.makedirs(args.out, exist_ok=True)
    for key in sorted(series):
        coll, nodes, gpn = key
        ranks = nodes * gpn
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        for arm in sorted(series[key]):
            pts = sorted(series[key][arm])
            ax.plot([b for b, _ in pts], [b / (t * 1e3) * bus_factor(coll, ranks) for b, t in pts],
                    label=arm, lw=1.4)
        sizes = sorted({b for arm in series[key] for b, _ in series[key][arm]})
        auto_x, auto_y = [], []
        for b in sizes:
            arms = [a for a in series[key] if (key, a, b) in prior]
            if not arms:
                continue
            a = min(arms, key=lambda a: prior[(key, a, b)])
            t = sum(times[(key, a, b)]) / len(times[(key, a, b)])
            auto_x.append(b)
            auto_y.append(b / (t * 1e3) * bus_factor(coll, ranks))
        ax.plot(auto_x, auto_y, "k.", ms=5, label="AUTO's pick")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes, nccl-tests size)")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(f"{fabric}: {coll}, {nodes} x {gpn} GPUs (simulated)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        path = os.path.join(args.out, f"{fabric}_{coll.lower()}_{nodes}x{gpn}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(path)


if __name__ == "__main__":
    main()
