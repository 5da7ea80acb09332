"""The commands of the CLI as Python functions: the same options (None means the CLI's default),
the same numbers bit for bit. Each runs its command's library call (typed options, no command line;
src/cli/*_call.hpp) and returns the document the command's --json prints; a number the call's C types
cannot hold (a negative seed, a count past 2^31) goes through the command line instead, whose
one-line error names it."""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from . import _arguments as kinds
from . import _core
from ._command import call_holds, option_words, path_text, repeated, run_call, run_feedback_call, run_json
from ._sweep import Sweep, read_sweep

if TYPE_CHECKING:
    import pandas as pd

SweepLike = Union[Sweep, "os.PathLike[str]", str]
METRICS = ["mean", "p99", "max", "above_10pct"]


def sweep_like(function: str, name: str, value: Any) -> None:
    if not isinstance(value, Sweep):
        if not isinstance(value, (str, os.PathLike)):
            raise kinds.ArgumentError(function, name, f"must be a Sweep or a path, got {kinds.shown(value)}")
        kinds.path(function, name, value)


# The kinds of the options replay, replay_json and replay_raw share, and tune's on top of them.
REPLAY_KINDS = dict(
    sweep=sweep_like, policies=kinds.list_of(kinds.text, single_allowed=True), seeds=kinds.whole,
    horizon=kinds.whole, seed=kinds.whole, delay=kinds.whole, window=kinds.whole, policy_start=kinds.whole,
    as_deployed=kinds.text, nccl_version=kinds.text, observation_cost=kinds.real, threads=kinds.whole,
    backend=kinds.text, nodes=kinds.list_of(kinds.whole),
    collectives=kinds.list_of(kinds.text), progress=kinds.flag,
)
TUNE_KINDS = dict(REPLAY_KINDS, tune_nodes=kinds.list_of(kinds.whole), score_nodes=kinds.list_of(kinds.whole),
                  objective=kinds.text)


def _sweep_file(sweep: SweepLike) -> str:
    return sweep.file() if isinstance(sweep, Sweep) else path_text(sweep)


def _policies(policies: Union[str, Sequence[str]]) -> list[str]:
    return [policies] if isinstance(policies, str) else list(policies)


def _words(values: Optional[Sequence[Any]]) -> Optional[list[str]]:
    """A list option as the call takes it: the words the command line would hold."""
    return None if values is None else [str(v) for v in values]


def _replay_args(sweep: SweepLike, policies: Union[str, Sequence[str]], options: dict[str, Any]) -> list[str]:
    args = ["replay", "--sweep", _sweep_file(sweep)] + repeated("--policy", _policies(policies))
    return args + option_words(options)


def _feedback_counts_hold(seeds: int, horizon: int, options: dict[str, Any]) -> bool:
    """Whether replay's or tune's call holds these counts and seed (else the command line runs)."""
    counts = [seeds, horizon] + [options.get(k) for k in ("delay", "window", "policy_start", "threads")]
    return call_holds(counts, [options.get("seed")])


@kinds.checked(**REPLAY_KINDS)
def replay_json(
    sweep: SweepLike, policies: Union[str, Sequence[str]], seeds: int, horizon: int,
    progress: Optional[bool] = None, **options: Any,
) -> dict[str, Any]:
    """`ncclbot replay ... --json`: the document the CLI prints. `options` are replay()'s. It runs the
    library's replay call (no command line is built or parsed), the CLI's code and numbers; a number
    the call's types cannot hold (a negative seed, a count past 2^31) goes through the command line
    instead, whose one-line error names it."""
    if not _feedback_counts_hold(seeds, horizon, options):
        return run_json(_replay_args(sweep, policies, dict(seeds=seeds, horizon=horizon, **options)), progress=progress)
    return run_feedback_call(_core.replay, _sweep_file(sweep), _policies(policies), seeds, horizon,
                             progress=progress, options=options)


@kinds.checked(**REPLAY_KINDS)
def replay(
    sweep: SweepLike,
    policies: Union[str, Sequence[str]],
    seeds: int,
    horizon: int,
    seed: Optional[int] = None,
    delay: Optional[int] = None,
    window: Optional[int] = None,
    policy_start: Optional[int] = None,
    as_deployed: Optional[str] = None,
    nccl_version: Optional[str] = None,
    observation_cost: Optional[float] = None,
    threads: Optional[int] = None,
    backend: Optional[str] = None,
    nodes: Optional[Sequence[int]] = None,
    collectives: Optional[Sequence[str]] = None,
    progress: Optional[bool] = None,
) -> "pd.DataFrame":
    """Replays each policy config (a grid expands to every point) on the sweep over `seeds` seeds
    and returns one row per config: policy, online_mean, online_p99, online_max,
    online_above_10pct, final_mean, final_p99, final_max, final_above_10pct (losses relative to
    the best arm, as `ncclbot replay` reports them). The run's settings are in df.attrs."""
    import pandas as pd

    doc = replay_json(sweep, policies, seeds, horizon, progress, seed=seed, delay=delay, window=window,
                      policy_start=policy_start, as_deployed=as_deployed, nccl_version=nccl_version,
                      observation_cost=observation_cost, threads=threads, backend=backend, nodes=nodes,
                      collectives=collectives)
    rows = []
    for config in doc["configs"]:
        row: dict[str, Any] = {"policy": config["policy"]}
        for phase in ("online", "final"):
            for metric in METRICS:
                row[f"{phase}_{metric}"] = config[phase][metric]
        for extra in ("call_cost_us", "watched"):  # as deployed; a watch rule's fraction of calls watched
            if extra in config:
                row[extra] = config[extra]
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs.update({k: v for k, v in doc.items() if k != "configs"})
    return df


@kinds.checked(**REPLAY_KINDS)
def replay_raw(
    sweep: SweepLike, policies: Union[str, Sequence[str]], seeds: int, horizon: int,
    progress: Optional[bool] = None, **options: Any,
) -> "pd.DataFrame":
    """One row per replay, as `ncclbot replay --raw` writes them: config, policy, context (the
    index among the selected contexts), seed, online_loss, final_loss, final_slot. Paired tests
    pair rows of two configs by (context, seed). `options` are replay()'s."""
    import pandas as pd

    folder = tempfile.mkdtemp(prefix="ncclbot-raw-")
    try:
        raw = os.path.join(folder, "raw.csv")
        if _feedback_counts_hold(seeds, horizon, options):
            run_feedback_call(_core.replay, _sweep_file(sweep), _policies(policies), seeds, horizon,
                              progress=progress, options=dict(options, raw=raw))
        else:
            run_json(_replay_args(sweep, policies, dict(seeds=seeds, horizon=horizon, raw=raw, **options)),
                     progress=progress)
        with open(raw, encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    finally:
        shutil.rmtree(folder, True)
    df = pd.DataFrame(rows)
    for column in ("config", "context", "seed", "final_slot"):
        df[column] = df[column].astype("int64")
    for column in ("online_loss", "final_loss"):
        df[column] = df[column].map(float).astype("float64")
    return df


@kinds.checked(**TUNE_KINDS)
def tune(
    sweep: SweepLike,
    policies: Union[str, Sequence[str]],
    seeds: int,
    horizon: int,
    tune_nodes: Optional[Sequence[int]] = None,
    score_nodes: Optional[Sequence[int]] = None,
    collectives: Optional[Sequence[str]] = None,
    objective: Optional[str] = None,
    seed: Optional[int] = None,
    delay: Optional[int] = None,
    window: Optional[int] = None,
    policy_start: Optional[int] = None,
    as_deployed: Optional[str] = None,
    nccl_version: Optional[str] = None,
    observation_cost: Optional[float] = None,
    threads: Optional[int] = None,
    backend: Optional[str] = None,
    progress: Optional[bool] = None,
) -> dict[str, Any]:
    """`ncclbot tune`: picks each grid's best point on the tune contexts and scores it on the
    score contexts. Returns the CLI's JSON document, by the library's call."""
    options = dict(tune_nodes=tune_nodes, score_nodes=score_nodes, collectives=collectives,
                   objective=objective, seed=seed, delay=delay, window=window, policy_start=policy_start,
                   as_deployed=as_deployed, nccl_version=nccl_version, observation_cost=observation_cost,
                   threads=threads, backend=backend)
    if _feedback_counts_hold(seeds, horizon, options):
        return run_feedback_call(_core.tune, _sweep_file(sweep), _policies(policies), seeds, horizon,
                                 progress=progress, options=options)
    args = ["tune", "--sweep", _sweep_file(sweep)] + repeated("--policy", _policies(policies))
    return run_json(args + option_words(dict(options, seeds=seeds, horizon=horizon)), progress=progress)


@kinds.checked(sweep=sweep_like, nodes=kinds.list_of(kinds.whole), collectives=kinds.list_of(kinds.text))
def inspect(
    sweep: SweepLike, nodes: Optional[Sequence[int]] = None, collectives: Optional[Sequence[str]] = None
) -> dict[str, Any]:
    """`ncclbot inspect`: the sweep's contexts, arms and how far NCCL's pick is from the best, by the
    library's call."""
    return run_call(_core.inspect, _sweep_file(sweep), nodes=_words(nodes), collectives=_words(collectives))


@kinds.checked(bytes=kinds.whole, fabric=kinds.text, collective=kinds.text, nodes=kinds.whole,
               gpus_per_node=kinds.whole)
def model(
    bytes: int,
    fabric: Optional[str] = None,
    collective: Optional[str] = None,
    nodes: Optional[int] = None,
    gpus_per_node: Optional[int] = None,
) -> dict[str, Any]:
    """`ncclbot model`: NCCL's cost-model prediction of every arm for one context, by the library's
    call (no command line); a number the call's types cannot hold goes through the command line,
    whose error names it."""
    options = dict(fabric=fabric, collective=collective, nodes=nodes, gpus_per_node=gpus_per_node, bytes=bytes)
    if not call_holds([nodes, gpus_per_node], [bytes]):
        return run_json(["model"] + option_words(options))
    return run_call(_core.model, bytes, fabric=fabric, collective=collective, nodes=nodes,
                    gpus_per_node=gpus_per_node)


@kinds.checked(study=kinds.path, out=kinds.path, backend=kinds.text, threads=kinds.whole, figures=kinds.flag,
               progress=kinds.flag)
def run(
    study: "os.PathLike[str] | str",
    out: "os.PathLike[str] | str",
    backend: Optional[str] = None,
    threads: Optional[int] = None,
    figures: bool = True,
    progress: Optional[bool] = None,
) -> dict[str, Any]:
    """`ncclbot run STUDY --out OUT`: runs a study (resuming from OUT/units) and writes its report.
    A study given by a bare name (\"quick\") is one of the package's examples. Returns the study's
    results.json as a dict; its "paths" entry holds the output files `run --json` names."""
    import json

    study_path = path_text(study)
    if not os.path.exists(study_path) and os.sep not in study_path:
        from . import examples_dir

        candidate = os.path.join(examples_dir(), study_path + ("" if study_path.endswith(".toml") else ".toml"))
        if os.path.exists(candidate):
            study_path = candidate
    if call_holds([threads]):
        paths = run_call(_core.run_study, study_path, path_text(out), backend=backend, threads=threads,
                         figures=figures, progress=progress)
    else:
        options = dict(out=path_text(out), backend=backend, threads=threads, no_figures=not figures)
        paths = run_json(["run", study_path] + option_words(options), progress=progress)
    results_path = paths.get("results") or os.path.join(path_text(out), "results.json")
    with open(results_path, encoding="utf-8") as f:
        results = json.load(f)
    results["paths"] = paths
    return results


PathLike = Union["os.PathLike[str]", str]


def _paths(value: Union[PathLike, Sequence[PathLike]]) -> list[str]:
    return [path_text(value)] if isinstance(value, (str, os.PathLike)) else [path_text(p) for p in value]


@kinds.checked(logs=kinds.paths, policies=kinds.list_of(kinds.text, single_allowed=True),
               sweep=sweep_like, resamples=kinds.whole, seed=kinds.whole, level=kinds.real, block_length=kinds.text,
               threads=kinds.whole, backend=kinds.text)
def ope(
    logs: Union[PathLike, Sequence[PathLike]],
    policies: Union[str, Sequence[str]],
    sweep: Optional[SweepLike] = None,
    resamples: Optional[int] = None,
    seed: Optional[int] = None,
    level: Optional[float] = None,
    block_length: Optional[str] = None,
    threads: Optional[int] = None,
    backend: Optional[str] = None,
) -> dict[str, Any]:
    """`ncclbot ope`: off-policy estimates (IPS, SNIPS, DR, and the replay method for a learning
    target) of each target policy's mean latency per logged call from the plugin's decision logs,
    with the truth from `sweep` beside them when given. Returns the CLI's JSON document, by the
    library's call."""
    log_list = _paths(logs)
    options = dict(sweep=None if sweep is None else _sweep_file(sweep), resamples=resamples, seed=seed, level=level,
                   block_length=block_length, threads=threads, backend=backend)
    if call_holds([resamples], [seed], [threads]):
        return run_call(_core.ope, log_list, _policies(policies), **options)
    args = ["ope"] + repeated("--log", log_list) + repeated("--policy", _policies(policies))
    return run_json(args + option_words(options))


@kinds.checked(study=kinds.path, policy=kinds.text, out=kinds.path, format=kinds.text,
               scenarios=kinds.list_of(kinds.text), fabric=kinds.text)
def export_table(
    study: PathLike, policy: str, out: PathLike, format: Optional[str] = None,
    scenarios: Optional[Sequence[str]] = None, fabric: Optional[str] = None,
) -> dict[str, Any]:
    """`ncclbot export-table`: a finished study's decisions of `policy` as a table the tuner plugin
    reads (format "ncclbot", NCCLBOT_TABLE) or NCCL's example CSV tuner format ("nccl-csv"),
    written to `out`. Returns the CLI's JSON document, by the library's call."""
    return run_call(_core.export_table, path_text(study), policy, path_text(out), format=format,
                    scenarios=None if scenarios is None else list(scenarios), fabric=fabric)


@kinds.checked(logs=kinds.paths, out=kinds.path, manifest=kinds.path,
               placement=kinds.text, fabric=kinds.text, samples=kinds.text, skip_unforced=kinds.flag,
               skip_failed=kinds.flag, allow_missing=kinds.flag)
def ingest(
    logs: Union[PathLike, Sequence[PathLike]],
    out: Optional[PathLike] = None,
    manifest: Optional[PathLike] = None,
    placement: Optional[str] = None,
    fabric: Optional[str] = None,
    samples: Optional[str] = None,
    skip_unforced: bool = False,
    skip_failed: bool = False,
    allow_missing: bool = False,
) -> dict[str, Any]:
    """`ncclbot ingest`: nccl-tests logs (or one campaign folder of `ncclbot plan`) into a forced-arm
    sweep written to `out` (read it with read_sweep). Returns the CLI's JSON summary, by the library's
    call."""
    log_list = _paths(logs)
    return run_call(_core.ingest, log_list, out=None if out is None else path_text(out),
                    manifest=None if manifest is None else path_text(manifest), placement=placement, fabric=fabric,
                    samples=samples, skip_unforced=skip_unforced, skip_failed=skip_failed, allow_missing=allow_missing)


@kinds.checked(partials=kinds.paths, out=kinds.path)
def merge(partials: Union[PathLike, Sequence[PathLike]], out: Optional[PathLike] = None) -> dict[str, Any]:
    """`ncclbot merge`: the partial results of `replay --shard` or `tune --phase ... --shard` combined
    into what the unsharded run gives (a tune phase's choice written to `out`). Returns the CLI's
    JSON document, by the library's call."""
    return run_call(_core.merge, _paths(partials), out=None if out is None else path_text(out))


def _byte_size(function: str, name: str, value: Any) -> None:
    if not (isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))):
        raise kinds.ArgumentError(function, name, f"must be a size (an integer, or text such as '64K'), got {kinds.shown(value)}")


def _size_text(value: Any) -> Optional[str]:
    return None if value is None else str(value)


@kinds.checked(fabric=kinds.text, nodes=kinds.list_of(kinds.whole), out=kinds.path, collectives=kinds.list_of(kinds.text),
               min_bytes=_byte_size, max_bytes=_byte_size, arms=kinds.list_of(kinds.text),
               channels=kinds.list_of(kinds.whole), chunk_bytes=kinds.list_of(_byte_size), launcher=kinds.text,
               nccl_version=kinds.text, gpus_per_node=kinds.whole, iters=kinds.whole, warmup=kinds.whole,
               step_factor=kinds.whole, startup_s=kinds.real)
def plan(
    fabric: str, nodes: Sequence[int], out: PathLike, collectives: Optional[Sequence[str]] = None,
    min_bytes: Optional[Union[int, str]] = None, max_bytes: Optional[Union[int, str]] = None,
    arms: Optional[Sequence[str]] = None, channels: Optional[Sequence[int]] = None,
    chunk_bytes: Optional[Sequence[Union[int, str]]] = None, launcher: Optional[str] = None,
    nccl_version: Optional[str] = None, gpus_per_node: Optional[int] = None, iters: Optional[int] = None,
    warmup: Optional[int] = None, step_factor: Optional[int] = None, startup_s: Optional[float] = None,
) -> dict[str, Any]:
    """`ncclbot plan`: a forced-arm nccl-tests campaign for a cluster written to `out` (campaign.toml,
    run.sh, run.sbatch, sweep.sh where NCCL >= 2.31), with its runs, what was left out and why, and its
    cost. Returns the CLI's JSON document, by the library's call."""
    counts = [gpus_per_node, iters, warmup]
    options = dict(collectives=_words(collectives), min_bytes=_size_text(min_bytes), max_bytes=_size_text(max_bytes),
                   arms=_words(arms), channels=_words(channels), chunk_bytes=_words(chunk_bytes), launcher=launcher,
                   nccl_version=nccl_version, gpus_per_node=gpus_per_node, iters=iters, warmup=warmup,
                   step_factor=step_factor, startup_s=None if startup_s is None else float(startup_s))
    if call_holds(counts, [step_factor]):
        return run_call(_core.plan, fabric, _words(nodes), path_text(out), **options)
    words = option_words(dict(fabric=fabric, nodes=nodes, out=path_text(out), **options))
    return run_json(["plan"] + words)


@kinds.checked(dir=kinds.path)
def plan_status(dir: PathLike) -> dict[str, Any]:
    """`ncclbot plan --status DIR`: each run (and sweep.sh launch) of a campaign folder as done, missing
    or failed, by the library's call."""
    return run_call(_core.plan_status, path_text(dir))


@kinds.checked(logs=kinds.paths, out=kinds.path, resamples=kinds.whole, seed=kinds.whole, level=kinds.real,
               block_length=kinds.text, threads=kinds.whole, backend=kinds.text, figures=kinds.flag, replace=kinds.flag)
def telemetry(
    logs: Union[PathLike, Sequence[PathLike]], out: PathLike, resamples: Optional[int] = None,
    seed: Optional[int] = None, level: Optional[float] = None, block_length: Optional[str] = None,
    threads: Optional[int] = None, backend: Optional[str] = None, figures: bool = True, replace: bool = False,
) -> dict[str, Any]:
    """`ncclbot telemetry`: a report of what the plugin did, from its decision logs, written to `out`.
    Returns the paths `telemetry --json` prints, with telemetry.json's content under
    "telemetry_document", by the library's call."""
    options = dict(resamples=resamples, seed=seed, level=None if level is None else float(level),
                   block_length=block_length, threads=threads, backend=backend)
    if call_holds([resamples], [seed], [threads]):
        return run_call(_core.telemetry, _paths(logs), path_text(out), figures=figures, replace=replace, **options)
    words = option_words(dict(out=path_text(out), no_figures=not figures, replace=replace, **options))
    return run_json(["telemetry"] + _paths(logs) + words)


@kinds.checked(fabric=kinds.text, bytes=_byte_size, nodes=kinds.whole, gpus_per_node=kinds.whole, chunks=kinds.whole,
               max_chunks=kinds.whole)
def hipipe(
    fabric: str, bytes: Union[int, str], nodes: Optional[int] = None, gpus_per_node: Optional[int] = None,
    chunks: Optional[int] = None, max_chunks: Optional[int] = None,
) -> dict[str, Any]:
    """`ncclbot hipipe`: the HiPIPE model's schedulers compared on one fabric and all-reduce size per
    rank (an integer, or text such as "64M"). Returns the CLI's JSON document, by the library's call."""
    counts = [nodes, gpus_per_node, chunks, max_chunks]
    options = dict(nodes=nodes, gpus_per_node=gpus_per_node, chunks=chunks, max_chunks=max_chunks)
    if call_holds(counts):
        return run_call(_core.hipipe, fabric, str(bytes), **options)
    return run_json(["hipipe"] + option_words(dict(fabric=fabric, bytes=str(bytes), **options)))


__all__ = ["replay", "replay_json", "replay_raw", "tune", "inspect", "model", "run", "ope", "export_table", "ingest",
           "merge", "plan", "plan_status", "telemetry", "hipipe", "read_sweep"]
