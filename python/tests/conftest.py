"""The tests compare the installed package with the `ncclbot` program of the build folder, given
as NCCLBOT_CLI (scripts/python-check.sh sets it), and read the repository's test data."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("NCCLBOT_CLI", str(REPO / "build" / "ncclbot"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"NCCLBOT_CLI={path} is not the built ncclbot program")
    return path


class Cli:
    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, *args: str, input: "str | None" = None) -> subprocess.CompletedProcess:
        return subprocess.run([self.path, *map(str, args)], input=input, capture_output=True, text=True)

    def json(self, *args: str, input: "str | None" = None):
        r = self(*args, "--json", input=input)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)


@pytest.fixture(scope="session")
def run_cli(cli: str) -> Cli:
    return Cli(cli)


@pytest.fixture(scope="session")
def sweep_file(tmp_path_factory, run_cli) -> pathlib.Path:
    """A small simulated sweep written by the CLI (with call dynamics and NCCL's prior)."""
    path = tmp_path_factory.mktemp("sweep") / "sim.csv"
    r = run_cli("synth", "--fabric", "h100-ib-a", "--seed", "1", "--nodes", "4,16",
                "--collectives", "allreduce,allgather", "--samples", "3", "--out", str(path))
    assert r.returncode == 0, r.stderr
    return path
