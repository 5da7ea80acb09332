"""The statistics of `ncclbot stats`, on Python sequences or numpy arrays: each function hands the
library's call the CLI's JSON input and returns its JSON answer as a dict (NaN goes in as null, the
untested entry); errors name the input "<input>"."""

from __future__ import annotations

import json
import math
from typing import Any, Optional, Sequence

from . import _core
from ._arguments import ArgumentError, shown, whole
from ._command import call_holds, run, run_call

Numbers = Sequence[float]


def _value(function: str, where: str, v: Any, entry: bool = False) -> Any:
    """The JSON form of one input field. NaN marks an untested entry of a list, so it is null there;
    a NaN option (alpha, level, resamples, ...) would read as "unset" and is refused, as is an
    infinity, which has no JSON form, and anything JSON cannot hold."""
    if hasattr(v, "tolist"):  # numpy arrays and scalars
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_value(function, f"{where}[{i}]", x, entry=True) for i, x in enumerate(v)]
    if isinstance(v, float) and math.isnan(v):
        if entry:
            return None
        raise ArgumentError(function, where, "must be a number, got nan (NaN marks only an untested list entry)")
    if isinstance(v, float) and math.isinf(v):
        raise ArgumentError(function, where, f"must be finite (NaN marks an untested entry), got {v}")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise ArgumentError(function, where, f"must be a number, a string or a list of them, got {shown(v)}")


def test(name: str, threads: int = 1, **fields: Any) -> dict[str, Any]:
    """`ncclbot stats NAME` with the given input fields (None fields are left out)."""
    whole(name, "threads", threads)
    doc = json.dumps({k: _value(name, k, v) for k, v in fields.items() if v is not None}, allow_nan=False)
    if not call_holds([], [], [threads]):  # the command line's error names it
        return json.loads(run(["stats", name, "--threads", str(threads)], input=doc))
    return run_call(_core.stats, name, doc, threads)


def holm(p: Numbers, alpha: Optional[float] = None) -> dict[str, Any]:
    """Holm step-down adjusted p-values; NaN marks an untested entry, left out of the family."""
    return test("holm", p=p, alpha=alpha)


def bonferroni(p: Numbers, alpha: Optional[float] = None) -> dict[str, Any]:
    """Bonferroni adjusted p-values, min(1, m p)."""
    return test("bonferroni", p=p, alpha=alpha)


def permutation(
    diffs: Numbers,
    alternative: Optional[str] = None,
    method: Optional[str] = None,
    resamples: Optional[int] = None,
    seed: Optional[int] = None,
    threads: int = 1,
) -> dict[str, Any]:
    """Paired sign-flip permutation test of the mean difference (exact when 2^n is small)."""
    return test("permutation", threads, diffs=diffs, alternative=alternative, method=method,
                resamples=resamples, seed=seed)


def bootstrap(
    x: Numbers,
    y: Optional[Numbers] = None,
    statistic: Optional[str] = None,
    threshold: Optional[float] = None,
    level: Optional[float] = None,
    method: Optional[str] = None,
    resamples: Optional[int] = None,
    seed: Optional[int] = None,
    threads: int = 1,
) -> dict[str, Any]:
    """Bootstrap confidence interval (percentile or BCa) of mean, p99, max or count_above; with
    `y`, of statistic(x) - statistic(y) over pairs."""
    return test("bootstrap", threads, x=x, y=y, statistic=statistic, threshold=threshold, level=level,
                method=method, resamples=resamples, seed=seed)


def wilcoxon(diffs: Numbers, alternative: Optional[str] = None, zero_method: Optional[str] = None) -> dict[str, Any]:
    """Wilcoxon signed-rank test."""
    return test("wilcoxon", diffs=diffs, alternative=alternative, zero_method=zero_method)


__all__ = ["test", "holm", "bonferroni", "permutation", "bootstrap", "wilcoxon"]
