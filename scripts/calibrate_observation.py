#!/usr/bin/env python3
"""Per-call noise and spikes implied by published nccl-tests logs: the calibration behind the
simulator's [observation] table (docs/simulator.md "The observation model").

nccl-tests prints, per size, the means of `iters` timed iterations. If iterations were independent
with a log-normal spread sigma, the relative difference d = (a - b) / mean of two means of the same
configuration has standard deviation sigma * sqrt(2 / iters). Two kinds of pair are used:

  - like for like: the same column (out-of-place, or in-place) of two runs of one test, in the logs
    that hold two runs (the interleaved ones, 1 MiB - 8 GiB);
  - out-of-place against in-place of one run, in the single-run logs, after removing each log's
    median offset per size band: the two are not the same configuration (out-of-place is
    systematically slower at small sizes in some logs), and the offset is printed.

sigma is estimated robustly, median(|d|) / 0.6745 * sqrt(iters / 2): consistent for normal d, and
unmoved by the slow iterations the spike model takes separately (the median of two-sample spreads
without the 0.6745 would understate sigma by a third). A pair whose implied spread is above
SPIKE_CV holds one slow iteration: a spike. The per-call spike probability is the maximum-likelihood
p with P(a size shows one) = 1 - (1 - p)^(means per size x iters), each log with its own number of
means per size (2 for one run, 4 for two).

Reads DATA_DIR, by default the third-party nccl-tests logs in `$NCCLBOT_SHARED_DIR/data/nccl-tests`
as the tests find them (the folder beside the clone when the variable is unset; not part of the
repository, not copied into it). Exits with status 2 and one line when those logs are not there.

    python3 scripts/calibrate_observation.py [DATA_DIR]
"""
import math
import os
import statistics
import sys

ITERS = 20  # timed iterations per mean in every log below (nccl-tests -n 20, the default)
LOGS = [  # (file, source: the public repository file or issue it is a verbatim copy of)
    ("h100_1node_8gpu_allreduce_ring_forced_8B-8G.txt",
     "togethercomputer/together-nccl-tests: benchmarks/H100/results/20260305_220043/all_reduce_ring.out"),
    ("h100_a3mega_2node_16gpu_allreduce_auto_8B-8G.txt",
     "lessizzmore/create-a3mega-ztan-fork: ztan-NCCL-test-result (commit 02dd8f4)"),
    ("gh200_alps_2node_8gpu_allreduce_auto_8B-4G_srun_prefixed.txt",
     "boeschf/nccl-benchmark-on-alps-2025: results/nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0/"
     "job-n-00008-N-0002-142996.out"),
    ("h100_2x1node_8gpu_allreduce_ring_forced_1M-8G_INTERLEAVED_BAD.txt",
     "togethercomputer/together-nccl-tests: benchmarks/H100/results/20260306_001221_slurm/all_reduce_ring.out"),
    ("h100_2x1node_8gpu_allreduce_nvls_auto_1M-8G_INTERLEAVED_BAD.txt",
     "togethercomputer/together-nccl-tests: benchmarks/H100/results/20260306_001221_slurm/all_reduce_nvls.out"),
]
SPIKE_CV = 0.25  # an implied spread above this is one slow iteration, not call-to-call noise
SPIKE_D = SPIKE_CV * math.sqrt(2.0 / ITERS)  # the same threshold on |d|
NORMAL_MAD = 0.6745  # median |z| of a standard normal
BANDS = ("<= 16 MiB", "32-128 MiB", ">= 256 MiB")


def band_of(size):
    return BANDS[0] if size <= 16 << 20 else (BANDS[1] if size <= 128 << 20 else BANDS[2])


def runs_by_size(path):
    """{size: [(out-of-place time, in-place time) per run]} of one log."""
    rows = {}
    with open(path) as f:
        for line in f:
            t = line.split()
            if t and t[0].endswith(":"):  # srun's "0: " prefix
                t = t[1:]
            if len(t) < 13 or not t[0].isdigit():
                continue
            try:
                rows.setdefault(int(t[0]), []).append((float(t[5]), float(t[9])))
            except ValueError:
                continue
    return rows


def rel_diff(a, b):
    return (a - b) / ((a + b) / 2.0)


def sigma_of(ds):
    """Per-iteration sigma from relative differences of two means: median(|d|) / 0.6745 * sqrt(iters/2)."""
    return statistics.median(abs(d) for d in ds) / NORMAL_MAD * math.sqrt(ITERS / 2.0)


def spike_probability(sizes):
    """Maximum-likelihood per-call p from [(iterations observed at a size, spike seen)], by bisection on
    the score (monotone in p)."""
    def score(p):
        s = 0.0
        for n, seen in sizes:
            q = (1.0 - p) ** n
            s += n * q / (1.0 - q) / (1.0 - p) if seen else -n / (1.0 - p)
        return s
    lo, hi = 1e-9, 0.5
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if score(mid) > 0 else (lo, mid)
    return (lo + hi) / 2.0


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
    like = {b: [] for b in BANDS}      # like-for-like relative differences
    crossed = {b: [] for b in BANDS}   # out-of-place vs in-place, offset removed
    offsets = []                       # (log, band, median offset, sizes)
    observed = []                      # (iterations observed at a size, spike seen)
    spike_sizes = []                   # implied size of each spike, times the median
    print("sources (verbatim public nccl-tests logs, 20 timed iterations per mean):")
    for name, source in LOGS:
        runs = runs_by_size(os.path.join(data, name))
        print(f"  {name}: {source}")
        per_band = {b: [] for b in BANDS}
        for size, rs in sorted(runs.items()):
            means = [x for r in rs for x in r]
            # A spike: some two means of the size differ by more than two-mean noise can.
            seen = max(abs(rel_diff(a, b)) for a in means for b in means) > SPIKE_D
            observed.append((len(means) * ITERS, seen))
            if seen:
                spike_sizes.append(1.0 + ITERS * (max(means) - min(means)) / min(means))
                continue
            if len(rs) >= 2:
                for column in (0, 1):
                    like[band_of(size)].append(rel_diff(rs[0][column], rs[1][column]))
            else:
                per_band[band_of(size)].append(rel_diff(rs[0][0], rs[0][1]))
        for b, ds in per_band.items():
            if len(ds) >= 3:
                off = statistics.median(ds)
                offsets.append((name, b, off, len(ds)))
                crossed[b].extend(d - off for d in ds)
    print("\nout-of-place minus in-place, median per log and band (a systematic offset, removed below):")
    for name, b, off, n in offsets:
        print(f"  {name[:48]:<48} {b:<10} {100 * off:+.2f}% over {n} sizes")
    print("\nband         like-for-like pairs  sigma    out-of-place vs in-place pairs  sigma")
    for b in BANDS:
        lf = f"{len(like[b]):>5}  {100 * sigma_of(like[b]):6.2f}%" if like[b] else "    0       -  "
        cr = f"{len(crossed[b]):>5}  {100 * sigma_of(crossed[b]):6.2f}%" if crossed[b] else "    0       -"
        print(f"{b:<12} {lf:>27}    {cr:>34}")
    spikes = sum(seen for _, seen in observed)
    p = spike_probability(observed)
    print(f"\nsizes with a spike: {spikes} of {len(observed)}; per-call spike probability (maximum "
          f"likelihood, each log's means per size) {p:.5f}")
    low = 1.0 + SPIKE_CV * math.sqrt(2.0 * ITERS)
    alpha = len(spike_sizes) / sum(math.log(x / low) for x in spike_sizes)
    print(f"spike sizes x median: {', '.join(f'{x:.1f}' for x in sorted(spike_sizes))}; "
          f"threshold {low:.2f}; Hill tail index {alpha:.2f}")


if __name__ == "__main__":
    main()
