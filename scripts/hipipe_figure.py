#!/usr/bin/env python3
"""Figure of a HiPIPE study: HiPIPE's makespan reduction vs each baseline across message sizes,
one panel per fabric (mean over the node counts of that fabric), with the paper's 28.85% marked.

Command: python3 scripts/hipipe_figure.py DIR   (DIR holds hipipe_cases.csv; writes DIR/hipipe.png)
`ncclbot hipipe --study ... --out DIR` runs it automatically unless --no-figure is given.
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BASELINES = ["hierarchical", "equal-chunk", "themis", "equal-chunk-best"]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    rows = list(csv.DictReader(open(f"{out}/hipipe_cases.csv")))
    # (fabric, baseline) -> bytes -> [reductions over node counts]
    red = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["scheduler"] in BASELINES:
            red[(r["fabric"], r["scheduler"])][float(r["bytes"])].append(float(r["hipipe_reduction"]))
    fabrics = sorted({r["fabric"] for r in rows}, key=lambda f: [r["fabric"] for r in rows].index(f))
    fig, axes = plt.subplots(1, len(fabrics), figsize=(3.6 * len(fabrics), 3.8), sharey=True, squeeze=False)
    for ax, fabric in zip(axes[0], fabrics):
        for b in BASELINES:
            pts = sorted(red[(fabric, b)].items())
            ax.plot([x for x, _ in pts], [100 * sum(v) / len(v) for _, v in pts], marker="o", ms=3, label=b)
        ax.axhline(28.85, color="grey", ls="--", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(fabric, fontsize=9)
        ax.set_xlabel("all-reduce bytes per rank")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("HiPIPE makespan reduction (%)")
    axes[0][0].text(0.02, 30, "paper: 28.85%", fontsize=7, color="grey", transform=axes[0][0].get_yaxis_transform())
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, [f"vs {x}" for x in labels], loc="lower center", ncol=len(BASELINES), fontsize=8)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(f"{out}/hipipe.png", dpi=130)
    print(f"wrote {out}/hipipe.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
