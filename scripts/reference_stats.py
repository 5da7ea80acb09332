#!/usr/bin/env python3
"""Expected values for the statistics tests, computed with SciPy and statsmodels.

Command (from the repository root; installs nothing, see scripts/setup.sh for scipy/statsmodels):
    python3 scripts/reference_stats.py --out tests/data/stats

Writes holm.json, permutation.json, wilcoxon.json, binomial.json, mcnemar.json and bootstrap.json.
Inputs are random but fixed (numpy default_rng with the seeds below), sizes 5-200, with ties and
zeros. NaN is written as null. Versions used are recorded in each file under "generator".
Regenerate only when the definitions change; the C++ tests in tests/stats/ compare against these.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import scipy
import scipy.stats as st
import statsmodels
from scipy.stats import _resampling
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

GENERATOR = {"scipy": scipy.__version__, "statsmodels": statsmodels.__version__, "numpy": np.__version__,
             "command": "python3 scripts/reference_stats.py --out tests/data/stats"}


def clean(v):
    """JSON-safe: NaN -> None, numpy scalars -> Python numbers."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [clean(x) for x in v]
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items()}
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else float(v)
    return v


def dump(out_dir, name, cases):
    path = os.path.join(out_dir, name)
    with open(path, "w") as f:
        json.dump({"generator": GENERATOR, "cases": clean(cases)}, f, indent=1, allow_nan=False)
        f.write("\n")
    print(f"wrote {path}: {len(cases)} cases", file=sys.stderr)


def holm_cases(rng):
    cases = []
    inputs = []
    for m in (5, 12, 50, 200):
        inputs.append(rng.uniform(0, 0.2, m))                 # continuous
        inputs.append(np.round(rng.uniform(0, 0.1, m), 3))    # ties
    inputs.append(np.array([0.0, 1.0, 0.01, 0.01, 0.04, 1.0, 0.0]))  # exact 0 and 1, ties
    inputs.append(np.array([0.01, np.nan, 0.04, 0.03, np.nan, 0.005]))  # untested hypotheses
    inputs.append(np.array([np.nan, np.nan]))
    inputs.append(np.array([0.3]))
    for p in inputs:
        ok = ~np.isnan(p)
        holm = np.full(p.shape, np.nan)
        bonf = np.full(p.shape, np.nan)
        if ok.any():
            holm[ok] = multipletests(p[ok], method="holm")[1]
            bonf[ok] = multipletests(p[ok], method="bonferroni")[1]
        cases.append({"p": p.tolist(), "holm": holm.tolist(), "bonferroni": bonf.tolist()})
    return cases


def mean_stat(x, axis=-1):
    return np.mean(x, axis=axis)


def permutation_cases(rng):
    cases = []
    exact_inputs = []
    for n in (5, 9, 12, 16, 20):
        exact_inputs.append(rng.integers(-6, 9, n) / 8.0)          # dyadic: ties and zeros, exact sums
        exact_inputs.append(np.round(rng.normal(0.3, 1.0, n), 6))  # continuous
    exact_inputs.append(np.array([0.5, -0.5, 0.25, -0.25, 0.0, 0.0, 0.125, -0.125, 0.0]))  # t = 0
    exact_inputs.append(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]))  # the 2/512 floor
    for d in exact_inputs:
        for alt in ("two-sided", "greater", "less"):
            res = st.permutation_test((d,), mean_stat, permutation_type="samples", n_resamples=np.inf,
                                      alternative=alt, vectorized=True)
            cases.append({"diffs": d.tolist(), "alternative": alt, "exact": True,
                          "sign_vectors": 2 ** len(d), "p": float(res.pvalue), "statistic": float(res.statistic)})
    for n, shift in ((50, 0.25), (100, 0.1), (200, 0.0)):
        d = np.round(rng.normal(shift, 1.0, n), 2)
        for alt in ("two-sided", "greater", "less"):
            b = 99999
            res = st.permutation_test((d,), mean_stat, permutation_type="samples", n_resamples=b,
                                      alternative=alt, vectorized=True, rng=np.random.default_rng(7))
            cases.append({"diffs": d.tolist(), "alternative": alt, "exact": False, "resamples": b,
                          "p": float(res.pvalue), "statistic": float(res.statistic)})
    return cases


def wilcoxon_cases(rng):
    cases = []
    inputs = []
    for n in (5, 8, 13, 20, 30, 50):
        inputs.append(("no_ties", np.round(rng.normal(0.4, 1.0, n), 9)))
    for n in (5, 9, 13, 14, 40, 60, 120, 200):
        inputs.append(("ties_zeros", rng.integers(-4, 7, n).astype(float)))
    for kind, d in inputs:
        for zero_method in ("wilcox", "pratt"):
            for alt in ("two-sided", "greater", "less"):
                methods = ["auto", "asymptotic"] + (["exact"] if kind == "no_ties" else [])
                for method in methods:
                    if zero_method == "pratt" and kind == "no_ties" and method != "auto":
                        continue  # identical to wilcox without zeros; keep the file small
                    res = st.wilcoxon(d, zero_method=zero_method, alternative=alt, method=method)
                    case = {"diffs": d.tolist(), "zero_method": zero_method, "alternative": alt,
                            "method": "approx" if method == "asymptotic" else method,
                            "statistic": float(res.statistic), "p": float(res.pvalue)}
                    if method == "asymptotic":
                        case["z"] = float(res.zstatistic)
                    cases.append(case)
    return cases


def binomial_cases():
    cases = []
    for k, n, p in ((7, 8, 0.5), (1, 8, 0.5), (0, 10, 0.5), (10, 10, 0.5), (4, 8, 0.5), (3, 20, 0.3),
                    (17, 20, 0.3), (6, 20, 0.3), (95, 200, 0.5), (130, 200, 0.55), (2, 200, 0.01),
                    (0, 0, 0.5), (1, 1, 0.5), (12, 31, 0.25)):
        for alt in ("two-sided", "greater", "less"):
            res = st.binomtest(k, n, p, alternative=alt) if n > 0 else None
            cases.append({"k": k, "n": n, "p": p, "alternative": alt,
                          "p_value": 1.0 if res is None else float(res.pvalue)})
    return cases


def mcnemar_cases():
    cases = []
    for b, c in ((7, 1), (1, 7), (0, 0), (5, 5), (0, 9), (30, 12), (100, 80), (3, 4), (19, 1), (250, 200)):
        res = mcnemar([[10, b], [c, 10]], exact=True)
        cases.append({"b": b, "c": c, "statistic": float(res.statistic), "p_value": float(res.pvalue)})
    return cases


THRESHOLD = 0.10


def statistic_fn(name):
    if name == "mean":
        return lambda x, axis=-1: np.mean(x, axis=axis)
    if name == "p99":
        return lambda x, axis=-1: np.percentile(x, 99, axis=axis)
    if name == "max":
        return lambda x, axis=-1: np.max(x, axis=axis)
    if name == "count_above":
        return lambda x, axis=-1: np.sum(x > THRESHOLD, axis=axis).astype(float)
    raise ValueError(name)


def losses(rng, n):
    """Loss-like values: mostly small, a heavy right tail, some exact zeros (the best arm picked)."""
    x = rng.exponential(0.05, n) * (rng.uniform(size=n) < 0.8)
    return np.round(x, 4)


def bootstrap_cases(rng):
    cases = []
    b = 100000
    for n in (20, 200):
        x = losses(rng, n)
        y = np.round(np.clip(x - rng.exponential(0.02, n), 0, None), 4)
        for stat in ("mean", "p99", "max", "count_above"):
            f = statistic_fn(stat)
            for method in ("percentile", "bca"):
                for paired in (False, True):
                    if paired:
                        idx = np.arange(n)
                        fi = (lambda f: lambda i, axis=-1: f(x[i], axis=axis) - f(y[i], axis=axis))(f)
                        data, g = (idx,), fi
                    else:
                        data, g = (x,), f
                    res = st.bootstrap(data, g, n_resamples=b, method=method, confidence_level=0.95,
                                       vectorized=True, rng=np.random.default_rng(11))
                    dist = res.bootstrap_distribution
                    alpha = 0.025
                    if method == "bca":
                        a1, a2, a_hat = _resampling._bca_interval(data, g, axis=-1, alpha=alpha, theta_hat_b=dist,
                                                                  batch=None, xp=np)
                        a1, a2, a_hat = float(np.squeeze(a1)), float(np.squeeze(a2)), float(np.squeeze(a_hat))
                    else:
                        a1, a2, a_hat = alpha, 1 - alpha, float("nan")
                    case = {"x": x.tolist(), "statistic": stat, "threshold": THRESHOLD, "method": method,
                            "level": 0.95, "resamples": b, "estimate": float(g(*data)),
                            "low": float(res.confidence_interval.low), "high": float(res.confidence_interval.high),
                            "level_low": a1, "level_high": a2, "acceleration": a_hat,
                            "standard_error": float(res.standard_error)}
                    if paired:
                        case["y"] = y.tolist()
                    cases.append(case)
    # A degenerate case: nothing above the threshold, so every resample counts 0.
    z = np.full(30, 0.01)
    res = st.bootstrap((z,), statistic_fn("count_above"), n_resamples=1000, method="bca", vectorized=True,
                       rng=np.random.default_rng(3))
    cases.append({"x": z.tolist(), "statistic": "count_above", "threshold": THRESHOLD, "method": "bca",
                  "level": 0.95, "resamples": 1000, "estimate": 0.0, "low": float(res.confidence_interval.low),
                  "high": float(res.confidence_interval.high), "degenerate": True})
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/data/stats")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import warnings
    warnings.simplefilter("ignore")
    dump(args.out, "holm.json", holm_cases(np.random.default_rng(20261129)))
    dump(args.out, "permutation.json", permutation_cases(np.random.default_rng(20261130)))
    dump(args.out, "wilcoxon.json", wilcoxon_cases(np.random.default_rng(20261131)))
    dump(args.out, "binomial.json", binomial_cases())
    dump(args.out, "mcnemar.json", mcnemar_cases())
    dump(args.out, "bootstrap.json", bootstrap_cases(np.random.default_rng(20261132)))


if __name__ == "__main__":
    main()
