#!/usr/bin/env python3
"""The table of docs/results.md "The cost of watching", from a finished run of
experiments/watching.toml: per policy, the mean online loss over every score context (the pooled
block of results.json, with its bootstrap interval), the fraction of calls it watched (the mean of
each score's `watched`), how many times fewer calls that is than watching every call, and the same
loss in the variant without the cost of watching (DIR/variants/*/results.json), then the Holm
corrected tests of the base study.

Usage: python3 scripts/watch_table.py DIR/results.json [--variant DIR/variants/V/results.json]

Standard library only.
"""
import json
import sys


def pooled_means(results):
    """policy -> (estimate, low, high) of the pooled mean online loss."""
    return {p["policy"]: (p["metrics"]["mean"]["estimate"], p["metrics"]["mean"]["low"],
                          p["metrics"]["mean"]["high"]) for p in results["pooled"]}


def watched_fractions(results):
    """policy -> the mean over all score contexts of the fraction of calls watched."""
    sums, counts = {}, {}
    for s in results["scores"]:
        sums[s["policy"]] = sums.get(s["policy"], 0.0) + sum(s["watched"])
        counts[s["policy"]] = counts.get(s["policy"], 0) + len(s["watched"])
    return {p: sums[p] / counts[p] for p in sums}


def pct(x):
    return f"{100 * x:.3f}"


def table(base, variant):
    means = pooled_means(base)
    free = pooled_means(variant) if variant else {}
    watched = watched_fractions(base)
    learners = {p["name"] for p in base["policies"] if not p["spec"].startswith(("auto", "oracle", "random"))}
    lines = ["| policy | mean online loss % (95% CI) | calls watched % | fewer calls watched | "
             "loss % without the cost of watching |",
             "| --- | --- | --- | --- | --- |"]
    for p in base["policies"]:
        name = p["name"]
        est, lo, hi = means[name]
        w = watched.get(name, 0.0) if name in learners else None
        wtext = "-" if w is None else pct(w)
        fewer = "-" if w is None or w == 0 else f"{1 / w:.1f}x"
        ftext = pct(free[name][0]) if name in free else "-"
        lines.append(f"| {name} | {pct(est)} ({pct(lo)}-{pct(hi)}) | {wtext} | {fewer} | {ftext} |")
    return "\n".join(lines)


def tests(base):
    lines = ["| a | b | family | mean difference (points) | p | p (Holm) | rejected |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for h in base["hypotheses"]:
        lines.append(f"| {h['a']} | {h['b']} | {h['family']} | {100 * h['mean_diff']:.3f} | {h['p']:.4g} | "
                     f"{h['p_holm']:.4g} | {'yes' if h['reject'] else 'no'} |")
    return "\n".join(lines)


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    base = json.load(open(argv[0]))
    variant = None
    if len(argv) == 3 and argv[1] == "--variant":
        variant = json.load(open(argv[2]))
    elif len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print(table(base, variant))
    print()
    print(tests(base))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
