#!/usr/bin/env python3
"""How much setting channels and chunk size gains over NCCL's default, per message size, from knob
sweeps (ncclbot synth --knobs, or a finished study's DIR/sweeps/*.csv).

Usage: python3 scripts/knob_gain.py SWEEP.csv [SWEEP.csv ...] [--figure OUT.png] [--json]

NCCL's default arm of a context is AUTO's: the argmin of prior_us over NCCL's algorithm x protocol
arms at NCCL's own knobs (channels 0, chunk_bytes 0), ties to the lowest algorithm, then protocol, as
NCCL's selection does. Means are over each arm's samples. For every context and each knob it reports
the gain mu_default / mu_best - 1 of the best arm that changes only that knob of the default arm:
  channels  AUTO's algorithm and protocol, any channel count, NCCL's chunk;
  chunk     AUTO's algorithm and protocol, NCCL's channels, any chunk;
  both      AUTO's algorithm and protocol, any channels and chunk;
  any arm   every arm of the context (algorithm and protocol too).
Prints the median and largest gain per sweep, knob and size band (below 64 KiB, 64 KiB to 4 MiB,
4 to 128 MiB, above 128 MiB), and the knob headroom: the mean over contexts of mu_slot / mu_best - 1,
mu_slot the best arm at NCCL's own knobs (any algorithm and protocol) and mu_best the best arm, what
a learner kept to NCCL's knobs loses at best. --figure draws gain against message size, one line per
knob (median over the contexts of a size), a panel per sweep. Standard library, plus matplotlib for
--figure.

The gains are of sample means: among arms whose true latencies are equal, the smallest sample mean
is below their common truth (the winner's curse), so with sampling noise every gain is biased
upward; a sweep synthesised with --noise-scale 0 gives the knob model's own gains.
"""
import csv
import json
import statistics
import sys
from collections import defaultdict

ALGOS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = ["LL", "LL128", "Simple"]
BANDS = [("< 64 KiB", 0, 64 << 10), ("64 KiB - 4 MiB", 64 << 10, 4 << 20),
         ("4 - 128 MiB", 4 << 20, 128 << 20), ("> 128 MiB", 128 << 20, 1 << 62)]
KNOBS = ["channels", "chunk", "both", "any arm"]


def read_sweep(path):
    """{context: {(algo, proto, channels, chunk): [mean, prior]}}"""
    cells = defaultdict(lambda: defaultdict(lambda: [0.0, 0, None]))
    with open(path, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            ctx = (row["fabric"], row["collective"], int(row["nodes"]), int(row["gpus_per_node"]), int(row["bytes"]))
            arm = (row["algo"], row["proto"], int(row.get("channels") or 0), int(row.get("chunk_bytes") or 0))
            cell = cells[ctx][arm]
            cell[0] += float(row["time_us"])
            cell[1] += 1
            if row.get("prior_us") not in (None, ""):
                cell[2] = float(row["prior_us"])
    return {ctx: {arm: (c[0] / c[1], c[2]) for arm, c in arms.items()} for ctx, arms in cells.items()}


def default_arm(arms):
    best = None
    for algo in ALGOS:
        for proto in PROTOS:
            cell = arms.get((algo, proto, 0, 0))
            if cell is None or cell[1] is None or cell[1] < 0:
                continue
            if best is None or cell[1] < arms[best][1]:
                best = (algo, proto, 0, 0)
    return best


def gains(arms):
    d = default_arm(arms)
    if d is None:
        return None
    mu = arms[d][0]
    same = {a: m for a, (m, _) in arms.items() if a[:2] == d[:2]}
    pick = {
        "channels": [m for a, m in same.items() if a[3] == 0],
        "chunk": [m for a, m in same.items() if a[2] == 0],
        "both": list(same.values()),
        "any arm": [m for m, _ in arms.values()],
    }
    return {k: mu / min(v) - 1.0 for k, v in pick.items()}


def headroom(arms):
    """mu of the best arm at NCCL's own knobs over mu of the best arm, minus 1 (None without one)."""
    slot = [m for a, (m, _) in arms.items() if a[2] == 0 and a[3] == 0]
    return min(slot) / min(m for m, _ in arms.values()) - 1.0 if slot else None


def summarise(path):
    per_context, rooms = [], []
    for ctx, arms in sorted(read_sweep(path).items()):
        g = gains(arms)
        if g is not None:
            per_context.append((ctx[4], g))
        h = headroom(arms)
        if h is not None:
            rooms.append(h)
    bands = {}
    for name, lo, hi in BANDS:
        rows = [g for b, g in per_context if lo <= b < hi]
        if rows:
            bands[name] = {k: {"median": statistics.median(r[k] for r in rows), "max": max(r[k] for r in rows),
                               "contexts": len(rows)} for k in KNOBS}
    room = {"mean": statistics.mean(rooms), "max": max(rooms)} if rooms else None
    return per_context, bands, room


def main(argv):
    paths = [a for a in argv if not a.startswith("--")]
    figure = argv[argv.index("--figure") + 1] if "--figure" in argv else None
    if figure:
        paths.remove(figure)
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out = {}
    for p in paths:
        per_context, bands, room = summarise(p)
        out[p] = {"contexts": len(per_context), "bands": bands, "knob_headroom": room}
        if "--json" not in argv:
            print(f"{p}: {len(per_context)} contexts; knob headroom mean {room['mean']:.2%}, largest "
                  f"{room['max']:.2%}; gain over NCCL's default, median / largest")
            for name, row in bands.items():
                cells = "  ".join(f"{k} {row[k]['median']:.1%} / {row[k]['max']:.1%}" for k in KNOBS)
                print(f"  {name:>15} ({row['channels']['contexts']:3d}): {cells}")
        if figure:
            out[p]["per_context"] = per_context
    if "--json" in argv:
        print(json.dumps({p: {k: v[k] for k in ("contexts", "bands", "knob_headroom")} for p, v in out.items()},
                         indent=1))
    if figure:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        cols = min(2, len(paths))
        rows = (len(paths) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 3.8 * rows), squeeze=False)
        for ax in axes.flat[len(paths):]:
            ax.set_visible(False)
        for ax, p in zip(axes.flat, paths):
            by_size = defaultdict(list)
            for b, g in out[p]["per_context"]:
                by_size[b].append(g)
            sizes = sorted(by_size)
            for k in KNOBS:
                ax.plot(sizes, [100 * statistics.median(g[k] for g in by_size[s]) for s in sizes], label=k)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("gain over NCCL's default (%)")
            ax.set_title(p.rsplit("/", 1)[-1].removesuffix(".csv") + ": median over node counts and collectives")
            ax.legend()
        fig.tight_layout()
        fig.savefig(figure, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
