#!/usr/bin/env python3
"""Draw the figures of an ncclbot study report from its results.json.

Called by `ncclbot run` as:  python3 scripts/study_figures.py DIR/results.json DIR/figures
(and can be rerun by hand the same way). Writes PNG files and figures/index.json, the list of
figures with captions that the report embeds, in a fixed order. Output is deterministic: the Agg
backend, fixed sizes and DPI, and no timestamp or version metadata in the PNG files, so a rerun
of the same study writes the same bytes.
"""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DPI = 100
PNG_META = {"Software": None}


def colors(n):
    cmap = plt.get_cmap("tab20" if n > 10 else "tab10")
    return [cmap(i % cmap.N) for i in range(n)]


def save(fig, out_dir, name, index, caption):
    fig.savefig(os.path.join(out_dir, name), dpi=DPI, metadata=PNG_META)
    plt.close(fig)
    index.append({"file": name, "caption": caption})


def grid_shape(n, ncols=3):
    ncols = min(ncols, n)
    return int(math.ceil(n / ncols)), ncols


def scores_by(results):
    table = {}
    for s in results["scores"]:
        table[(s["scenario"], s["policy"])] = s
    return table


def scenario_panels(results):
    """One panel per scenario on a grid: names, policies, scores, the figure, its panels, colours."""
    scen = [s["name"] for s in results["scenarios"]]
    pols = [p["name"] for p in results["policies"]]
    rows, cols = grid_shape(len(scen))
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    panels = [axes[k // cols][k % cols] for k in range(len(scen))]
    for k in range(len(scen), rows * cols):
        axes[k // cols][k % cols].axis("off")
    return scen, pols, scores_by(results), fig, panels, colors(len(pols))


def loss_cdfs(results, out_dir, index):
    scen, pols, table, fig, panels, col = scenario_panels(results)
    for name, ax in zip(scen, panels):
        for i, p in enumerate(pols):
            x = np.sort(np.asarray(table[(name, p)]["losses"], dtype=float)) * 100.0
            y = np.arange(1, len(x) + 1) / len(x)
            ax.step(x, y, where="post", color=col[i], label=p, linewidth=1.2)
        ax.set_xscale("symlog", linthresh=0.1)
        ax.axvline(10.0, color="grey", linestyle=":", linewidth=1)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("loss (%)")
        ax.set_ylabel("fraction of contexts")
        ax.set_ylim(0, 1.01)
    panels[0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    save(fig, out_dir, "loss_cdf.png", index,
         "Per-policy CDF of the per-context loss over the score contexts of each scenario "
         "(symlog axis; dotted line at 10%).")


def paired_bars(results, out_dir, index):
    scen = [s["name"] for s in results["scenarios"]]
    pols = [p["name"] for p in results["policies"]]
    table = scores_by(results)
    col = colors(len(pols))
    level = results["study"]["level"] * 100
    for metric, label, scale in (("mean", "mean loss (%)", 100.0), ("p99", "p99 loss (%)", 100.0),
                                 ("above_10pct", "contexts above 10% loss", 1.0)):
        fig, ax = plt.subplots(figsize=(min(16, max(8, 0.12 * len(scen) * len(pols) + 3)), 5))
        width = 0.8 / len(pols)
        x = np.arange(len(scen))
        for i, p in enumerate(pols):
            est = np.array([table[(s, p)]["metrics"][metric]["estimate"] for s in scen]) * scale
            lo = np.array([table[(s, p)]["metrics"][metric]["low"] for s in scen]) * scale
            hi = np.array([table[(s, p)]["metrics"][metric]["high"] for s in scen]) * scale
            err = np.vstack([np.maximum(est - lo, 0), np.maximum(hi - est, 0)])
            ax.bar(x - 0.4 + width * (i + 0.5), est, width, yerr=err, color=col[i], label=p, capsize=1.5,
                   error_kw={"linewidth": 0.8})
        ax.set_xticks(x)
        ax.set_xticklabels(scen, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(label)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        save(fig, out_dir, "paired_bars_%s.png" % metric, index,
             "%s per scenario and policy, with %g%% bootstrap intervals over contexts; bars of one scenario "
             "are paired (same contexts, same seeds)." % (label[0].upper() + label[1:], level))


def horizon_curves(results, out_dir, index):
    scen, pols, table, fig, panels, col = scenario_panels(results)
    for name, ax in zip(scen, panels):
        for i, p in enumerate(pols):
            c = table[(name, p)]["curve"]
            ax.plot([q["horizon"] for q in c], [q["mean_online"] * 100 for q in c], marker="o", markersize=3,
                    color=col[i], label=p, linewidth=1.2)
        ax.set_xscale("log")
        # Cold starts pay hundreds of percent early on, warm ones a few: a symlog axis shows both.
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_ylim(bottom=0)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("horizon (collective calls)")
        ax.set_ylabel("mean online loss (%)")
    panels[0].legend(fontsize=7)
    fig.tight_layout()
    save(fig, out_dir, "online_loss_vs_horizon.png", index,
         "Mean online loss over the score contexts against the horizon (what a job pays while learning, "
         "exploration included), each policy at its tuned configuration (symlog axis, linear below 1%).")


def loss_vs_horizon(results, out_dir, index):
    """Each policy's mean over the scenarios of its mean online loss at each long horizon."""
    spec = results["study"].get("loss_vs_horizon") or {}
    horizons = spec.get("horizons") or []
    if not horizons:
        return
    pols = [p["name"] for p in results["policies"]]
    col = colors(len(pols))
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for i, p in enumerate(pols):
        rows = [s["loss_vs_horizon"] for s in results["scores"]
                if s["policy"] == p and len(s.get("loss_vs_horizon", [])) == len(horizons)]
        if not rows:
            continue
        mean = [sum(r[h]["mean_online"] for r in rows) / len(rows) * 100 for h in range(len(horizons))]
        ax.plot(horizons, mean, marker="o", markersize=3, color=col[i], label=p, linewidth=1.2)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("calls per context")
    ax.set_ylabel("mean online loss (%)")
    ax.legend(fontsize=7, ncol=2)
    mode = results["study"].get("as_deployed")
    fig.tight_layout()
    save(fig, out_dir, "loss_vs_long_horizon.png", index,
         "Mean online loss against the number of calls per context, out to %d, each policy at its tuned "
         "configuration, %s; averaged over the scenarios, each over up to %d score contexts and %d seeds "
         "(symlog axis, linear below 1%%)." % (horizons[-1], "as deployed (%s mode)" % mode if mode else
                                                 "in the ideal world (no plugin cost, no feedback lag)",
                                                 spec.get("contexts_per_scenario", 0), spec.get("seeds", 0)))


def context_maps(results, out_dir, index):
    pols = [p["name"] for p in results["policies"]]
    auto = [p["name"] for p in results["policies"] if p["spec"].startswith("auto")]
    if not auto:
        return
    auto = auto[0]
    others = [p for p in pols if p != auto]
    table = scores_by(results)
    cmap = plt.get_cmap("magma_r")
    for k, sc in enumerate(results["scenarios"]):
        name = sc["name"]
        ctxs = sc["score"]["context_list"]
        nodes = sorted({c["nodes"] for c in ctxs})
        sizes = sorted({c["bytes"] for c in ctxs})
        # Several fabrics or collectives in one scenario share a cell: show the worst loss there.
        def grid(losses):
            g = np.full((len(nodes), len(sizes)), np.nan)
            for c, l in zip(ctxs, losses):
                i, j = nodes.index(c["nodes"]), sizes.index(c["bytes"])
                g[i, j] = l if np.isnan(g[i, j]) else max(g[i, j], l)
            return g

        auto_g = grid(table[(name, auto)]["losses"])
        panels = [(auto, auto_g)] + [(p, grid(table[(name, p)]["losses"])) for p in others]
        rows, cols = grid_shape(len(panels), 4)
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols + 1.0, (1.3 + 0.35 * len(nodes)) * rows),
                                 squeeze=False, constrained_layout=True)
        for idx, (p, g) in enumerate(panels):
            ax = axes[idx // cols][idx % cols]
            im = ax.imshow(np.clip(g * 100, 0, 50), cmap=cmap, vmin=0, vmax=50, aspect="auto",
                           interpolation="nearest", origin="lower")
            if p != auto:
                # Where AUTO loses more than 10% and this policy does not: repaired.
                rep = (auto_g > 0.10) & (g <= 0.10)
                worse = (auto_g <= 0.10) & (g > 0.10)
                ys, xs = np.nonzero(rep)
                ax.scatter(xs, ys, marker="o", s=14, facecolors="none", edgecolors="#00c000", linewidths=1.0)
                ys, xs = np.nonzero(worse)
                ax.scatter(xs, ys, marker="x", s=14, color="#0070ff", linewidths=1.0)
                ax.set_title("%s (o repaired: %d, x new: %d)" % (p, int(rep.sum()), int(worse.sum())), fontsize=8)
            else:
                ax.set_title("%s loss (%d cells > 10%%)" % (p, int(np.nansum(auto_g > 0.10))), fontsize=8)
            ax.set_yticks(range(len(nodes)))
            ax.set_yticklabels([str(n) for n in nodes], fontsize=7)
            step = max(1, len(sizes) // 6)
            ax.set_xticks(range(0, len(sizes), step))
            ax.set_xticklabels([human_bytes(sizes[j]) for j in range(0, len(sizes), step)], fontsize=6)
            ax.set_ylabel("nodes", fontsize=7)
        for idx in range(len(panels), rows * cols):
            axes[idx // cols][idx % cols].axis("off")
        fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label="loss (%, capped at 50)")
        fname = "context_map_%02d.png" % (k + 1)
        save(fig, out_dir, fname, index,
             "Context map of %s (message size x nodes): loss of AUTO's pick, and of each policy; circles mark "
             "contexts AUTO loses more than 10%% on and the policy repairs, crosses contexts it makes worse "
             "than 10%%." % name)


def sensitivity(results, out_dir, index):
    """Each policy's pooled objective in every run of the study's variants, baseline first."""
    runs = results.get("sensitivity")
    if not runs:
        return
    pols = [p["name"] for p in results["policies"]]
    objective = results["study"]["objective"]
    is_loss = objective != "above_10pct"
    col = colors(len(pols))
    names = [r["variant"] for r in runs]
    fig, ax = plt.subplots(figsize=(min(16, max(8, 0.12 * len(runs) * len(pols) + 3)), 5))
    width = 0.8 / len(pols)
    x = np.arange(len(runs))
    for i, p in enumerate(pols):
        y = np.array([r["objective"][p] for r in runs]) * (100.0 if is_loss else 1.0)
        ax.bar(x - 0.4 + width * (i + 0.5), y, width, color=col[i], label=p)
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    label = {"mean": "pooled mean loss (%)", "p99": "pooled p99 loss (%)",
             "above_10pct": "contexts above 10% loss"}[objective]
    if is_loss:
        # Cold starts lose tens of percent, warm learners one or two: a symlog axis shows both.
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_ylim(bottom=0)
    ax.set_ylabel(label)
    ax.axvline(0.5, color="grey", linestyle=":", linewidth=1)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    save(fig, out_dir, "sensitivity.png", index,
         "%s per policy in the baseline run and under each variant of the simulator's assumptions (each "
         "policy at the configuration tuned in that run%s)." %
         (label[0].upper() + label[1:], "; symlog axis, linear below 1%" if is_loss else ""))


def human_bytes(b):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= scale:
            return "%g%s" % (b / scale, unit)
    return "%dB" % b


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: study_figures.py RESULTS.json FIGURES_DIR\n")
        return 2
    with open(sys.argv[1]) as f:
        results = json.load(f)
    out_dir = sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    plt.rcParams.update({"font.size": 9, "svg.hashsalt": "ncclbot"})
    index = []
    loss_cdfs(results, out_dir, index)
    paired_bars(results, out_dir, index)
    horizon_curves(results, out_dir, index)
    loss_vs_horizon(results, out_dir, index)
    context_maps(results, out_dir, index)
    sensitivity(results, out_dir, index)
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
