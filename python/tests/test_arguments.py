"""Arguments are checked by type before a command runs: a wrong one raises ArgumentError (an
InputError and a TypeError) naming the function and the argument, and nothing is written."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ncclbot
from ncclbot import InputError
from ncclbot import ArgumentError


def _raises(fn, *args, where: str, **kwargs) -> ArgumentError:
    with pytest.raises(ArgumentError) as caught:
        fn(*args, **kwargs)
    assert isinstance(caught.value, InputError) and isinstance(caught.value, TypeError)
    assert caught.value.exit_code == 2
    assert where in str(caught.value), str(caught.value)
    return caught.value


def test_a_bool_is_not_a_number_of_calls(sweep_file):
    # True used to become a bare --horizon flag that took --json as its value.
    _raises(ncclbot.replay, sweep_file, "auto", seeds=1, horizon=True, where="replay: horizon")
    _raises(ncclbot.replay_json, sweep_file, "auto", 1, 10, threads=True, where="replay_json: threads")
    _raises(ncclbot.tune, sweep_file, "auto", seeds=1, horizon=10, tune_nodes=[4, False],
            where="tune: tune_nodes[1]")
    _raises(ncclbot.model, True, where="model: bytes")
    _raises(ncclbot.model, 4096, nodes=2.5, where="model: nodes")
    _raises(ncclbot.synth, "h100-ib-a", seed="1", where="synth: seed")


def test_lists_and_strings_are_told_apart(sweep_file):
    _raises(ncclbot.inspect, sweep_file, nodes="4,16", where="inspect: nodes")
    _raises(ncclbot.replay, sweep_file, ["auto", 3], seeds=1, horizon=10, where="replay: policies[1]")
    _raises(ncclbot.replay, 42, "auto", seeds=1, horizon=10, where="replay: sweep")
    _raises(ncclbot.replay_json, sweep_file, "auto", 1, 10, no_such_option=1, where="no_such_option")


def test_numpy_integers_are_integers(sweep_file):
    got = ncclbot.replay_json(sweep_file, "auto", seeds=np.int64(1), horizon=np.int32(10), nodes=[np.int64(4)])
    assert got == ncclbot.replay_json(sweep_file, "auto", seeds=1, horizon=10, nodes=[4])


def test_a_nul_byte_in_a_path_writes_nothing(tmp_path):
    keep = tmp_path / "keep"
    keep.write_text("the user's file\n")
    _raises(ncclbot.synth, "h100-ib-a", nodes=[4], out=str(tmp_path / "keep\x00.csv"), where="synth: out")
    _raises(ncclbot.read_sweep, str(keep) + "\x00.csv", where="read_sweep: path")
    sweep = ncclbot.synth("h100-ib-a", nodes=[4], samples=1)
    _raises(sweep.to_csv, str(tmp_path / "keep\x00.csv"), where="to_csv: path")
    with pytest.raises(InputError, match="NUL byte"):
        ncclbot.command("synth", "--fabric", "h100-ib-a", "--out", str(tmp_path / "keep\x00.csv"))
    assert keep.read_text() == "the user's file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


def test_an_infinity_is_the_packages_own_error():
    _raises(ncclbot.stats.holm, [math.inf, 0.1], where="holm: p[0]")
    _raises(ncclbot.stats.bootstrap, np.array([1.0, -np.inf]), where="bootstrap: x[1]")
    _raises(ncclbot.stats.permutation, [0.1, 0.2], threads=True, where="permutation: threads")
    # NaN still marks an untested entry: Holm leaves it out of the family (p 0.1 alone stays 0.1).
    assert ncclbot.stats.holm([math.nan, 0.1])["adjusted"][1] == pytest.approx(0.1)


def test_the_compiled_reader_refuses_a_nul_byte_in_a_path(tmp_path):
    from ncclbot import _core

    keep = tmp_path / "keep"
    keep.write_text("not a sweep\n")
    code, csv, side, err = _core.canonical_sweep(str(keep) + "\x00.csv")
    assert code == 2 and csv == "" and "NUL byte" in err


def test_a_nan_option_is_not_the_default():
    # NaN in an option used to reach the CLI as null, i.e. "unset": alpha 0.05 and 95% came back.
    _raises(ncclbot.stats.holm, [0.1], alpha=math.nan, where="holm: alpha")
    _raises(ncclbot.stats.bootstrap, [1.0, 2.0, 3.0], level=float("nan"), where="bootstrap: level")
    _raises(ncclbot.stats.permutation, [0.1, 0.2], seed=np.float64("nan"), where="permutation: seed")


def test_none_is_refused_where_the_argument_has_no_default(sweep_file, tmp_path):
    _raises(ncclbot.replay, None, "auto", seeds=1, horizon=10, where="replay: sweep")
    _raises(ncclbot.read_sweep, None, where="read_sweep: path")
    _raises(ncclbot.run, "quick", out=None, where="run: out")
    assert not any(tmp_path.iterdir())


def test_what_json_cannot_hold_is_named():
    from decimal import Decimal

    _raises(ncclbot.stats.holm, [Decimal("0.1")], where="holm: p[0]")
    _raises(ncclbot.stats.test, "holm", p=[0.1], extra={"a": set()}, where="holm: extra")
    with pytest.raises(InputError, match="input must be a string"):
        ncclbot.command("stats", "holm", input=b"{}")
    _raises(ncclbot.Sweep.from_pandas, [1, 2, 3], where="from_pandas: df")
    _raises(ncclbot.Sweep, 5, where="Sweep: csv")
