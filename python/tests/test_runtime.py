"""How the package behaves inside a Python process: the GIL is free while a command runs, two threads
run two commands at once, progress reaches a callback, and the type stubs ship with it."""

from __future__ import annotations

import os
import threading
import time

import ncclbot
from ncclbot import _core


def _long_replay(sweep_file):
    return ncclbot.replay_json(sweep_file, ["ucb1:c=0.05|0.1|0.2|0.4,n0=1|4", "thompson"], seeds=16,
                               horizon=4000, threads=1, progress=False)


def test_the_gil_is_released_while_a_replay_runs(sweep_file):
    done = threading.Event()
    ticks = 0

    def replay():
        _long_replay(sweep_file)
        done.set()

    worker = threading.Thread(target=replay)
    start = time.perf_counter()
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    elapsed = time.perf_counter() - start
    # Held GIL: this loop would not run at all until the replay returned.
    assert elapsed > 0.3, "the replay was too short to tell"
    assert ticks > elapsed / 0.001 * 0.3


def test_progress_reaches_the_callback(sweep_file):
    seen = []
    _core.set_progress(lambda label, done, total, last: seen.append((label, done, total, last)))
    try:
        _long_replay(sweep_file)
    finally:
        _core.set_progress(None)
    assert seen, "no progress was reported"
    assert all(label == "replay" for label, *_ in seen)
    assert seen[-1][3] and seen[-1][1] == seen[-1][2] > 0
    dones = [d for _, d, _, _ in seen]
    assert dones == sorted(dones)


def test_progress_shows_as_a_line_without_tqdm(sweep_file, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails
    ncclbot.replay_json(sweep_file, ["ucb1:c=0.05|0.1|0.2|0.4,n0=1|4", "thompson"], seeds=16, horizon=4000,
                        threads=1, progress=True)
    err = capsys.readouterr().err
    assert "replay: " in err and "100%" in err


def test_the_package_ships_type_stubs():
    folder = os.path.dirname(ncclbot.__file__)
    assert os.path.exists(os.path.join(folder, "py.typed"))
    stub = open(os.path.join(folder, "_core.pyi"), encoding="utf-8").read()
    assert "def run_command(" in stub and "def canonical_sweep(" in stub


def test_the_console_script_is_the_cli(run_cli, tmp_path):
    import shutil
    import subprocess
    import sys

    script = shutil.which("ncclbot", path=os.path.dirname(sys.executable))
    assert script, "the package's ncclbot console script is not installed beside python"
    r = subprocess.run([script, "model", "--bytes", "4096", "--json"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == run_cli("model", "--bytes", "4096", "--json").stdout
    r = subprocess.run([script, "inspect", str(tmp_path / "none.csv")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("ncclbot: ")


def test_two_threads_run_two_replays_at_once(sweep_file, tmp_path):
    # Replay A (one shard, so its progress has a label of its own) stops inside its first progress
    # callback until replay B, started only then, has finished: with a lock around commands B could
    # not run while A holds it, and the wait would time out. Each output is the one it has alone.
    policies = ["--policy", "ucb1:c=0.05|0.1|0.2|0.4,n0=1|4", "--policy", "thompson"]
    a_args = ["replay", "--sweep", str(sweep_file), *policies, "--seeds", "16", "--horizon", "4000",
              "--threads", "1", "--shard", "0/2"]
    b_args = ["replay", "--sweep", str(sweep_file), "--policy", "auto", "--policy", "ucb1:c=0.1,n0=4",
              "--seeds", "2", "--horizon", "300", "--threads", "1", "--json"]
    a_waiting, b_done = threading.Event(), threading.Event()
    b_finished_first = []

    def callback(label, done, total, last):
        if label == "replay shard 0/2" and not last and not a_waiting.is_set():
            a_waiting.set()
            b_finished_first.append(b_done.wait(timeout=120))

    a_out = {}

    def run_a():
        a_out["result"] = _core.run_command(a_args + ["--out", str(tmp_path / "a.partial")])

    _core.set_progress(callback)
    try:
        worker = threading.Thread(target=run_a)
        worker.start()
        assert a_waiting.wait(timeout=120), "replay A reported no progress before it ended"
        b = _core.run_command(b_args)
        b_done.set()
        worker.join()
    finally:
        _core.set_progress(None)
    assert b_finished_first == [True]
    assert a_out["result"][0] == 0, a_out["result"][2]
    assert b[0] == 0, b[2]
    alone_a = _core.run_command(a_args + ["--out", str(tmp_path / "alone.partial")])
    alone_b = _core.run_command(b_args)
    assert alone_a[0] == 0 and alone_b[0] == 0
    assert (tmp_path / "a.partial").read_bytes() == (tmp_path / "alone.partial").read_bytes()
    assert b[1] == alone_b[1]


def test_two_threads_run_two_replays_at_once_by_the_library_call(sweep_file, monkeypatch):
    # As above, with the library's replay call (no command line): replay A stops inside its first
    # progress callback until replay B, started only then, has finished. Each result is the one it
    # has alone.
    def no_command_line(*args, **kwargs):
        raise AssertionError("a command line ran")

    def run_a():
        return ncclbot.replay_json(sweep_file, ["ucb1:c=0.05|0.1|0.2|0.4,n0=1|4", "thompson"], seeds=16,
                                   horizon=4000, threads=1, progress=False)

    def run_b():
        return ncclbot.replay_json(sweep_file, ["auto", "ucb1:c=0.1,n0=4"], seeds=2, horizon=300, threads=1,
                                   progress=False)

    monkeypatch.setattr(_core, "run_command", no_command_line)
    a_waiting, b_done = threading.Event(), threading.Event()
    b_finished_first = []

    def callback(label, done, total, last):
        if not last and not a_waiting.is_set():
            a_waiting.set()
            b_finished_first.append(b_done.wait(timeout=120))

    a_out = {}
    _core.set_progress(callback)
    try:
        worker = threading.Thread(target=lambda: a_out.setdefault("doc", run_a()))
        worker.start()
        assert a_waiting.wait(timeout=120), "replay A reported no progress before it ended"
        b = run_b()
        b_done.set()
        worker.join()
    finally:
        _core.set_progress(None)
    assert b_finished_first == [True]
    assert a_out["doc"] == run_a() and b == run_b()
