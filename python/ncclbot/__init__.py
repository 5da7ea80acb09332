"""ncclbot in Python: forced-arm sweeps as pandas DataFrames, policy replays, tuning, NCCL's cost
model, the statistics and whole studies, computed by the same library as the `ncclbot` program
and bit for bit equal to its --json output (docs/python.md).

    import ncclbot
    sw = ncclbot.synth("h100-ib-a", seed=1, nodes=[16, 32])
    res = ncclbot.replay(sw, ["auto", "ucb1:c=0.1,n0=4"], seeds=4, horizon=200)
"""

from __future__ import annotations

import os

from . import _core, stats
from ._api import (export_table, hipipe, ingest, inspect, merge, model, ope, plan, plan_status, replay, replay_json,
                   replay_raw, run, telemetry, tune)
from ._arguments import ArgumentError
from ._command import InputError, NcclbotError, NcclbotWarning
from ._command import run as _run_command
from ._sweep import Sweep, read_sweep, synth

__version__: str = _core.version


def command(*args: str, input: "str | None" = None) -> str:
    """Runs any `ncclbot` command line in process and returns what it printed on stdout, e.g.
    ncclbot.command("model", "--bytes", "4096", "--json")."""
    return _run_command(list(args), input)


def data_dir() -> str:
    """Where the fabric and HiPIPE presets are (inside the package when installed)."""
    return _core.data_dir()


def examples_dir() -> str:
    """The example studies (quick.toml, paper.toml, ...)."""
    return _core.experiments_dir()


def fabrics() -> list[str]:
    """The fabric presets `synth` knows."""
    folder = os.path.join(data_dir(), "fabrics")
    return sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".toml"))


__all__ = [
    "Sweep", "read_sweep", "synth", "replay", "replay_json", "replay_raw", "tune", "inspect", "model", "run", "ope",
    "export_table", "ingest", "merge", "plan", "plan_status", "telemetry", "hipipe",
    "stats", "command", "data_dir", "examples_dir", "fabrics", "NcclbotError", "InputError", "ArgumentError",
    "NcclbotWarning", "__version__",
]
