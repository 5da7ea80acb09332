#!/usr/bin/env python3
"""Draw the figures of an ncclbot telemetry report from its telemetry.json.

Called by `ncclbot telemetry` as:  python3 scripts/telemetry_figures.py DIR/telemetry.json DIR/figures
Writes learning_curves.png (the share of calls that departed from NCCL's pick, and the mean
measured latency relative to the context's first bucket, over each context's calls, with the
intervals telemetry.json holds) and figures/index.json. Deterministic: Agg, fixed size and DPI,
no metadata.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 100
PNG_META = {"Software": None}
MAX_CONTEXTS = 12  # the contexts with the most calls; telemetry.json has them all


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: telemetry_figures.py TELEMETRY.json FIGURES_DIR")
    with open(sys.argv[1], encoding="utf-8") as f:
        t = json.load(f)
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    contexts = sorted(t["per_context"], key=lambda c: (-c["calls"], c["collective"], c["bytes"]))[:MAX_CONTEXTS]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    cmap = plt.get_cmap("tab20")
    for k, c in enumerate(contexts):
        curve = c["learning_curve"]
        x = [(p["first_call"] + p["last_call"]) / 2 for p in curve]
        dep = [p["departure_share"]["value"] * 100 for p in curve]
        lo = [p["departure_share"]["ci"][0] * 100 for p in curve]
        hi = [p["departure_share"]["ci"][1] * 100 for p in curve]
        label = f"{c['collective']} {c['bytes']} B"
        color = cmap(k % cmap.N)
        a.plot(x, dep, color=color, label=label)
        a.fill_between(x, lo, hi, color=color, alpha=0.15, linewidth=0)
        base = curve[0]["mean_latency_us"]["value"]
        rel = [p["mean_latency_us"]["value"] / base for p in curve]
        rlo = [p["mean_latency_us"]["ci"][0] / base for p in curve]
        rhi = [p["mean_latency_us"]["ci"][1] / base for p in curve]
        b.plot(x, rel, color=color)
        b.fill_between(x, rlo, rhi, color=color, alpha=0.15, linewidth=0)
    a.set_xlabel("call index in the context")
    a.set_ylabel("departed from NCCL's pick (%)")
    b.set_xlabel("call index in the context")
    b.set_ylabel("mean latency / first bucket's")
    a.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    name = "learning_curves.png"
    fig.savefig(os.path.join(out, name), dpi=DPI, metadata=PNG_META)
    plt.close(fig)
    index = [{"file": name, "caption": f"Learning curves of the {len(contexts)} contexts with the most calls: "
              "departures from NCCL's pick (Wilson intervals) and mean latency relative to the first bucket "
              "(normal intervals)."}]
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()
