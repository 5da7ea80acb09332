#!/usr/bin/env python3
"""The tables of docs/results.md "Knob space", from a finished run of experiments/knobs.toml: per
policy, the mean online loss at each curve horizon (500, 5,000 and the study's own), averaged over
the scenarios of each fabric (the scenario name's prefix before the first '.', e.g. h100 and gb200);
the ratio of each listed learner's loss to flat UCB1's per fabric; the conservative promise as
checked (scores' `promise`); and the Holm-corrected tests.

Usage: python3 scripts/knob_table.py DIR/results.json [--variant DIR/variants/V/results.json]
                                     [--ratio OSUB --ratio Thompson ...]

Standard library only.
"""
import json
import sys

from watch_table import tests  # the Holm-corrected tests, as the watching table prints them


def fabric_of(scenario):
    return scenario.split(".", 1)[0]


def curve_means(results):
    """(policy, fabric, horizon) -> mean over that fabric's scenarios of the mean online loss."""
    sums, counts = {}, {}
    for s in results["scores"]:
        points = {c["horizon"]: c["mean_online"] for c in s["curve"]}
        for h, v in points.items():
            key = (s["policy"], fabric_of(s["scenario"]), h)
            sums[key] = sums.get(key, 0.0) + v
            counts[key] = counts.get(key, 0) + 1
    return {k: sums[k] / counts[k] for k in sums}


def pct(x):
    return f"{100 * x:.2f}%"


def loss_table(results):
    means = curve_means(results)
    fabrics = sorted({k[1] for k in means}, reverse=True)
    horizons = sorted({k[2] for k in means})
    head = "| policy | " + " | ".join(f"{h:,} calls" for h in horizons) + " |"
    lines = [f"Mean online loss, {' / '.join(fabrics)} scenarios:", "", head,
             "|---" * (len(horizons) + 1) + "|"]
    for p in results["policies"]:
        cells = [" / ".join(pct(means[(p["name"], f, h)]) for f in fabrics) for h in horizons]
        lines.append(f"| {p['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines), means, fabrics, horizons


def ratio_table(means, fabrics, horizons, learners):
    lines = ["| learner / UCB1 | " + " | ".join(f"{h:,} calls" for h in horizons) + " |",
             "|---" * (len(horizons) + 1) + "|"]
    for name in learners:
        cells = []
        for h in horizons:
            cells.append(" / ".join(f"{means[(name, f, h)] / means[('UCB1', f, h)]:.2f}x" for f in fabrics))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def promise_table(results):
    rows = {}
    for s in results["scores"]:
        c = s.get("promise")
        if not c:
            continue
        r = rows.setdefault(s["policy"], {"alpha": c["alpha"], "replays": 0, "broken": 0, "seeds": 0,
                                          "seeds_broken": 0, "first": 0, "horizon": c["horizon"]})
        r["replays"] += c["contexts"] * c["seeds"]
        r["broken"] += c["replays_broken"]
        r["seeds"] += c["seeds"]
        r["seeds_broken"] += c["seeds_broken"]
        if c["first_break_call"] > 0:
            r["first"] = c["first_break_call"] if r["first"] == 0 else min(r["first"], c["first_break_call"])
    if not rows:
        return ""
    lines = ["| policy | alpha | calls | replays that broke it | scenario seeds that broke it | earliest break |",
             "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        first = f"call {r['first']:,}" if r["first"] else "none"
        lines.append(f"| {name} | {r['alpha']} | {r['horizon']:,} | {r['broken']:,} of {r['replays']:,} | "
                     f"{r['seeds_broken']:,} of {r['seeds']:,} | {first} |")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    paths, learners = [argv[1]], []
    i = 2
    while i < len(argv):
        if argv[i] == "--variant" and i + 1 < len(argv):
            paths.append(argv[i + 1])
        elif argv[i] == "--ratio" and i + 1 < len(argv):
            learners.append(argv[i + 1])
        else:
            print(f"knob_table.py: unknown argument {argv[i]}", file=sys.stderr)
            return 2
        i += 2
    for k, path in enumerate(paths):
        with open(path) as f:
            results = json.load(f)
        print(f"## {'base study' if k == 0 else 'variant ' + path}\n")
        text, means, fabrics, horizons = loss_table(results)
        print(text + "\n")
        if learners:
            print(ratio_table(means, fabrics, horizons, learners) + "\n")
        promise = promise_table(results)
        if promise:
            print(promise + "\n")
        print(tests(results) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
