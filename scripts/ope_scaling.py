#!/usr/bin/env python3
"""How `ncclbot ope` and `ncclbot telemetry` scale with the size of a decision log (docs/performance.md).

For each size, the built plugin writes a log (`plugin-check --log`, epsilon-greedy eps = 0.3 over a
stationary h100-ib-a all-reduce sweep of 31 contexts, 72 bytes a record); then, each timed with the
peak resident memory of its process: reading the file to /dev/null (the floor: `cat`, after which
the file is in the page cache for the others), `ope` with two targets (auto and UCB1, so both the
block estimators and the replay method's second pass run) and `telemetry --no-figures`. Medians of
--reps runs. A log past NCCLBOT_LOG_MAX_MB (1 GiB) goes on in PATH.1, PATH.2, ...: all are read together. The
logs are deleted after their size is measured.

Usage: python3 scripts/ope_scaling.py [--build build] [--sizes 1e5,1e6,1e7] [--reps 3] [--work DIR]
       [--out FILE.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CONTEXTS = 31  # the sweep below: all-reduce over h100-ib-a, 4 nodes


def timed(cmd):
    """Wall seconds and peak resident memory (MiB) of one process."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"ope_scaling: {' '.join(cmd)} exited {code}: {err.strip()}")
    return wall, usage.ru_maxrss / 1024.0


def siblings(log):
    """The log and its rotated siblings PATH.1, PATH.2, ..., in the order written."""
    out = [log] if os.path.exists(log) else []
    n = 1
    while os.path.exists(f"{log}.{n}"):
        out.append(f"{log}.{n}")
        n += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--sizes", default="1e5,1e6,1e7", help="logged calls, comma-separated (e.g. 1e5,1e6,1e7,1e8)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", default="", help="folder for the logs (a 1e8 log takes about 7.2 GB)")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    ncclbot = os.path.join(args.build, "ncclbot")
    plugin = os.path.join(args.build, "libnccl-tuner-ncclbot.so")
    work = args.work or tempfile.mkdtemp(prefix="ncclbot-ope-scaling-")
    os.makedirs(work, exist_ok=True)
    sweep = os.path.join(work, "sweep.csv")
    subprocess.run([ncclbot, "synth", "--fabric", "h100-ib-a", "--seed", "3", "--nodes", "4", "--collectives",
                    "allreduce", "--samples", "8", "--observation", "off", "--out", sweep],
                   check=True, capture_output=True)
    rows = []
    print(f"{'calls':>12s} {'files':>5s} {'MB':>8s} {'cat s':>7s} {'ope s':>7s} {'ope MiB':>8s} {'telem s':>8s} "
          f"{'telem MiB':>9s}")
    for size in [int(float(s)) for s in args.sizes.split(",")]:
        log = os.path.join(work, f"log-{size}.bin")
        for old in siblings(log):
            os.remove(old)
        horizon = max(1, size // CONTEXTS)
        subprocess.run([ncclbot, "plugin-check", "--plugin", plugin, "--sweep", sweep, "--policy",
                        "egreedy:eps=0.3,decay=0,n0=4", "--seed", "4", "--horizon", str(horizon), "--log", log],
                       check=True, capture_output=True)
        files = siblings(log)  # past NCCLBOT_LOG_MAX_MB (1 GiB) the log goes on in PATH.1, PATH.2, ...
        size_bytes = sum(os.path.getsize(f) for f in files)
        logs = [a for f in files for a in ("--log", f)]
        runs = {"cat": [], "ope": [], "telemetry": []}
        for _ in range(args.reps):
            runs["cat"].append(timed(["cat", *files]))
            runs["ope"].append(timed([ncclbot, "ope", *logs, "--policy", "auto", "--policy", "ucb1:c=0.1,n0=1"]))
            runs["telemetry"].append(timed([ncclbot, "telemetry", *files, "--out", os.path.join(work, "t"),
                                            "--no-figures"]))
        med = {k: (sorted(w for w, _ in v)[len(v) // 2], max(m for _, m in v)) for k, v in runs.items()}
        row = {"calls_driven": horizon * CONTEXTS, "files": len(files), "file_bytes": size_bytes,
               "cat_s": med["cat"][0], "ope_s": med["ope"][0], "ope_peak_mib": med["ope"][1],
               "telemetry_s": med["telemetry"][0], "telemetry_peak_mib": med["telemetry"][1], "reps": args.reps}
        rows.append(row)
        print(f"{horizon * CONTEXTS:12d} {len(files):5d} {row['file_bytes'] / 1e6:8.0f} {row['cat_s']:7.2f} {row['ope_s']:7.2f} "
              f"{row['ope_peak_mib']:8.0f} {row['telemetry_s']:8.2f} {row['telemetry_peak_mib']:9.0f}", flush=True)
        for f in files:
            os.remove(f)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
