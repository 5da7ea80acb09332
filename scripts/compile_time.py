#!/usr/bin/env python3
"""Where a build's compile time goes, from Ninja's own log (BUILD/.ninja_log).

    scripts/compile_time.py [BUILD] [--top N] [--json]

Sums every step's wall time (end - start, as Ninja recorded it: CPU-seconds for a compiler that
runs on one core) by kind: test sources and links, command-line sources, library sources, CUDA,
the plugin and the rest. Only the newest entry of each output counts (Ninja appends a line per
rebuild), and steps that ran at the same moment are each counted in full, so the total is the
CPU time the build asked for, not its wall time.
"""
import argparse
import json
import os
import sys


def read_log(path):
    """The newest (start_ms, end_ms) of each output in a .ninja_log (format v5 and later)."""
    steps = {}
    if not os.path.isfile(path):  # checked first: a FIFO or a device would block or never end
        raise ValueError(f"{path}: no such regular file (build the folder first)")
    with open(path, encoding="utf-8", errors="replace") as f:
        header = f.readline()
        if not header.startswith("# ninja log v"):
            raise ValueError(f"{path}:1: not a ninja log")
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5:
                raise ValueError(f"{path}:{number}: expected 5 tab-separated fields")
            start, end, _mtime, output, _hash = fields
            steps[output] = (int(start), int(end))
    return steps


def kind_of(output):
    """The bucket a build output belongs to."""
    if output.endswith((".cu.o", ".cubin", "kernel-frames.txt")) or "ncclbot_kernels" in output:
        return "cuda"
    if "/tests/" in f"/{output}" or output.startswith("tests/") or "_test" in output:
        return "tests"
    if "plugin" in output or "nccl_tuner" in output or "nccl-tuner" in output:
        return "plugin"
    if "/src/cli/" in output or "ncclbot_commands" in output:
        return "cli"
    if "ncclbot_lib" in output:
        return "library"
    return "other"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--top", type=int, default=10, help="list the N slowest steps")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args()
    path = os.path.join(args.build, ".ninja_log")
    try:
        steps = read_log(path)
    except (OSError, ValueError) as e:
        print(f"compile_time: {e}", file=sys.stderr)
        return 2
    kinds = {}
    for output, (start, end) in steps.items():
        k = kinds.setdefault(kind_of(output), [0.0, 0])
        k[0] += (end - start) / 1000.0
        k[1] += 1
    total = sum(s for s, _ in kinds.values())
    slowest = sorted(steps.items(), key=lambda kv: kv[1][0] - kv[1][1])[: args.top]
    if args.json:
        json.dump({"total_s": round(total, 1), "steps": len(steps),
                   "kinds": {k: {"seconds": round(s, 1), "steps": n} for k, (s, n) in sorted(kinds.items())},
                   "slowest": [{"output": o, "seconds": (e - s) / 1000.0} for o, (s, e) in slowest]},
                  sys.stdout, indent=1)
        print()
        return 0
    for k, (s, n) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
        print(f"{k:8s} {s:8.1f} s  {n:4d} steps")
    print(f"{'total':8s} {total:8.1f} s  {len(steps):4d} steps ({total / 60:.1f} CPU-minutes)")
    for o, (s, e) in slowest:
        print(f"  {(e - s) / 1000.0:7.1f} s  {o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
