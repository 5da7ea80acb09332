#!/usr/bin/env python3
"""Per-call noise implied by published nccl-tests logs: the calibration behind the simulator's
[observation] table (docs/simulator.md "The observation model").

nccl-tests prints, per size, two means of `iters` timed iterations (out-of-place and in-place,
back to back on the same communicator). If iterations were independent with coefficient of
variation cv, two such means differ by about cv * sqrt(2 / iters); so |a - b| / mean / sqrt(2) *
sqrt(iters) estimates the per-iteration cv. Logs that hold two runs of the same test (the
interleaved one) give four means per size. A pair far above the rest is one slow iteration inside
a mean: a spike. Reads DATA_DIR, by default the third-party nccl-tests logs in
`$NCCLBOT_SHARED_DIR/data/nccl-tests` as the tests find them (the folder beside the clone when the
variable is unset; not part of the repository, not copied into it). Exits with status 2 and one line
when those logs are not there.

    python3 scripts/calibrate_observation.py [DATA_DIR]
"""
import math
import os
import statistics
import sys

LOGS = [  # (file, timed iterations per mean)
    ("h100_1node_8gpu_allreduce_ring_forced_8B-8G.txt", 20),
    ("h100_a3mega_2node_16gpu_allreduce_auto_8B-8G.txt", 20),
    ("gh200_alps_2node_8gpu_allreduce_auto_8B-4G_srun_prefixed.txt", 20),
    ("h100_2x1node_8gpu_allreduce_ring_forced_1M-8G_INTERLEAVED_BAD.txt", 20),
    ("h100_2x1node_8gpu_allreduce_nvls_auto_1M-8G_INTERLEAVED_BAD.txt", 20),
]
SPIKE_CV = 0.25  # an implied cv above this is one slow iteration, not call-to-call noise


def means_by_size(path):
    rows = {}
    with open(path) as f:
        for line in f:
            t = line.split()
            if t and t[0].endswith(":"):  # srun's "0: " prefix
                t = t[1:]
            if len(t) < 13 or not t[0].isdigit():
                continue
            try:
                rows.setdefault(int(t[0]), []).extend([float(t[5]), float(t[9])])
            except ValueError:
                continue
    return rows


def implied_cv(xs, iters):
    m = statistics.fmean(xs)
    return statistics.stdev(xs) / m * math.sqrt(iters)


def default_data_dir():
    """$NCCLBOT_SHARED_DIR/data/nccl-tests when the variable is set (as the tests read it), else the
    folder beside the clone."""
    shared = os.environ.get("NCCLBOT_SHARED_DIR")
    if shared:
        return os.path.join(shared, "data", "nccl-tests")
    return os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "nccl-tests")


def fail(message):
    """One line on stderr and status 2, the project's exit code for input a person must fix."""
    print(f"calibrate_observation.py: {message}", file=sys.stderr)
    sys.exit(2)


def require_logs(data):
    """Stops with one line when `data` is not a folder holding every log of LOGS: the logs are
    third-party and may be absent, which is not a crash."""
    if not os.path.isdir(data):
        fail(f"no third-party nccl-tests logs: {data} is not a folder "
             "(set NCCLBOT_SHARED_DIR or give DATA_DIR)")
    missing = [name for name, _ in LOGS if not os.path.isfile(os.path.join(data, name))]
    if missing:
        fail(f"{data} lacks {len(missing)} of the {len(LOGS)} nccl-tests logs this reads "
             f"(first: {missing[0]}); set NCCLBOT_SHARED_DIR or give DATA_DIR")


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else default_data_dir()
    require_logs(data)
    bands = {"<= 16 MiB": [], "32-128 MiB": [], ">= 256 MiB": []}
    spikes = 0
    pairs = 0
    sizes = []  # implied spike size (times the median) of each spiked size: one slow iteration
    low = 1.0 + SPIKE_CV * math.sqrt(2.0 * 20)
    for name, iters in LOGS:
        for size, xs in sorted(means_by_size(os.path.join(data, name)).items()):
            cv = implied_cv(xs, iters)
            pairs += 1
            if cv > SPIKE_CV:
                spikes += 1
                sizes.append(1.0 + iters * (max(xs) - min(xs)) / min(xs))
                continue
            key = "<= 16 MiB" if size <= 16 << 20 else ("32-128 MiB" if size <= 128 << 20 else ">= 256 MiB")
            bands[key].append(cv)
    print("band         sizes  median implied per-call cv   p75")
    for key, cvs in bands.items():
        q = statistics.quantiles(cvs, n=4)
        print(f"{key:<12} {len(cvs):>5}  {100 * statistics.median(cvs):24.2f}%  {100 * q[2]:5.2f}%")
    # A spike of s times the median in one of `iters` iterations moves a mean by (s - 1) / iters; the
    # threshold above catches s >~ 2.6. P(some mean of a size holds one) = 1 - (1 - p)^(means * iters).
    frac = spikes / pairs
    means_per_size = 2.0
    p = 1.0 - (1.0 - frac) ** (1.0 / (means_per_size * 20))
    print(f"sizes with a spike: {spikes} of {pairs} ({100 * frac:.1f}%) -> per-call spike probability ~{p:.4f}")
    # Pareto tail above the detection threshold: Hill's estimator of the index.
    alpha = len(sizes) / sum(math.log(x / low) for x in sizes)
    print(f"spike sizes x median: {', '.join(f'{x:.1f}' for x in sorted(sizes))}; "
          f"threshold {low:.2f}; Hill tail index {alpha:.2f}")


if __name__ == "__main__":
    main()
