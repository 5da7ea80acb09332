"""The package's numbers are the CLI's, bit for bit: each call is compared with the `ncclbot`
program run on the same input (exact float equality, not a tolerance)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import ncclbot

POLICIES = ["auto", "ucb1:c=0.1,n0=4", "greedy:n0=1|4", "egreedy:eps=0.1,n0=2"]


def test_replay_equals_the_cli_json(run_cli, sweep_file):
    args = ["--seeds", "3", "--horizon", "120", "--threads", "2", "--seed", "5"]
    want = run_cli.json("replay", "--sweep", sweep_file, *sum((["--policy", p] for p in POLICIES), []), *args)
    got = ncclbot.replay_json(sweep_file, POLICIES, seeds=3, horizon=120, threads=2, seed=5)
    assert got == want
    df = ncclbot.replay(ncclbot.read_sweep(sweep_file), POLICIES, seeds=3, horizon=120, threads=2, seed=5)
    assert list(df.columns) == ["policy"] + [f"{ph}_{m}" for ph in ("online", "final")
                                             for m in ("mean", "p99", "max", "above_10pct")]
    assert len(df) == len(want["configs"]) == 5  # greedy's grid has two points
    for row, config in zip(df.to_dict("records"), want["configs"]):
        assert row["policy"] == config["policy"]
        for phase in ("online", "final"):
            for metric, value in config[phase].items():
                assert row[f"{phase}_{metric}"] == value  # exact
    assert df.attrs["contexts"] == want["contexts"] and df.attrs["backend"] == "cpu"


def test_the_leader_schedule_equals_the_cli(run_cli, sweep_file):
    # The plugin's leader protocol by hand: windows of 4 decided 8 calls ahead, NCCL's pick first.
    args = ["--seeds", "2", "--horizon", "90", "--delay", "8", "--window", "4", "--policy-start", "12"]
    want = run_cli.json("replay", "--sweep", sweep_file, "--policy", "ucb1:c=0.1,n0=4", *args)
    got = ncclbot.replay_json(sweep_file, "ucb1:c=0.1,n0=4", seeds=2, horizon=90, delay=8, window=4,
                              policy_start=12)
    assert got == want and got["policy_start"] == 12 and got["window"] == 4
    df = ncclbot.replay(sweep_file, "ucb1:c=0.1,n0=4", seeds=2, horizon=90, delay=8, window=4, policy_start=12)
    assert df["online_mean"][0] == want["configs"][0]["online"]["mean"]
    got = ncclbot.tune(sweep_file, "ucb1:c=0.05|0.2,n0=4", seeds=2, horizon=80, tune_nodes=[4],
                       score_nodes=[16], delay=8, window=4, policy_start=12)
    assert got["policy_start"] == 12


def test_the_cost_of_watching_and_a_watch_rule_equal_the_cli(run_cli, sweep_file):
    policies = ["ucb1:c=0.1,n0=4", "ucb1:c=0.1,n0=4@watch:full=2,floor=0.1"]
    args = ["--seeds", "2", "--horizon", "300", "--as-deployed", "local", "--observation-cost", "0.05"]
    want = run_cli.json("replay", "--sweep", sweep_file, *sum((["--policy", p] for p in policies), []), *args)
    got = ncclbot.replay_json(sweep_file, policies, seeds=2, horizon=300, as_deployed="local",
                              observation_cost=0.05)
    assert got == want and "observation" in got
    df = ncclbot.replay(sweep_file, policies, seeds=2, horizon=300, as_deployed="local", observation_cost=0.05)
    assert math.isnan(df["watched"][0]) and df["watched"][1] == want["configs"][1]["watched"] < 1


def test_the_thread_count_does_not_change_a_replay(sweep_file):
    one = ncclbot.replay_json(sweep_file, POLICIES, seeds=2, horizon=60, threads=1)
    two = ncclbot.replay_json(sweep_file, POLICIES, seeds=2, horizon=60, threads=2)
    assert one == two


def test_synth_writes_what_the_cli_writes(run_cli, tmp_path):
    cli_path = tmp_path / "cli.csv"
    r = run_cli("synth", "--fabric", "gb200-mnnvl", "--seed", "9", "--nodes", "2", "--samples", "2",
                "--out", cli_path)
    assert r.returncode == 0, r.stderr
    sw = ncclbot.synth("gb200-mnnvl", seed=9, nodes=[2], samples=2)
    assert sw.csv == cli_path.read_text()
    out = tmp_path / "py.csv"
    ncclbot.synth("gb200-mnnvl", seed=9, nodes=[2], samples=2, out=out)
    assert out.read_bytes() == cli_path.read_bytes()


def test_inspect_tune_and_model_equal_the_cli(run_cli, sweep_file):
    assert ncclbot.inspect(sweep_file) == run_cli.json("inspect", sweep_file)
    assert ncclbot.inspect(sweep_file, nodes=[16]) == run_cli.json("inspect", sweep_file, "--nodes", "16")
    want = run_cli.json("tune", "--sweep", sweep_file, "--policy", "ucb1:c=0.05|0.2,n0=4", "--seeds", "2",
                        "--horizon", "80", "--tune-nodes", "4", "--score-nodes", "16", "--threads", "2")
    got = ncclbot.tune(sweep_file, "ucb1:c=0.05|0.2,n0=4", seeds=2, horizon=80, tune_nodes=[4],
                       score_nodes=[16], threads=2)
    assert got == want
    want = run_cli.json("model", "--fabric", "h100-ib-b", "--collective", "allgather", "--nodes", "8",
                        "--bytes", "1048576")
    assert ncclbot.model(1048576, fabric="h100-ib-b", collective="allgather", nodes=8) == want


def test_a_study_run_from_python_writes_the_cli_results(run_cli, tmp_path):
    from conftest import REPO

    study = REPO / "tests" / "data" / "study" / "tiny.toml"
    r = run_cli("run", study, "--out", tmp_path / "cli", "--no-figures", "--threads", "2")
    assert r.returncode == 0, r.stderr
    results = ncclbot.run(study, tmp_path / "py", figures=False, threads=2)
    assert set(results["paths"]) >= {"results", "report_md"}
    want = json.loads((tmp_path / "cli" / "results.json").read_text())
    got = json.loads((tmp_path / "py" / "results.json").read_text())
    assert got == want
    assert (tmp_path / "py" / "report.md").read_text() == (tmp_path / "cli" / "report.md").read_text()


def test_a_bundled_example_is_found_by_name():
    import os

    assert os.path.exists(os.path.join(ncclbot.examples_dir(), "quick.toml"))
    assert "h100-ib-a" in ncclbot.fabrics()


def test_errors_carry_the_cli_line_and_exit_code(run_cli, tmp_path):
    missing = tmp_path / "missing.csv"
    r = run_cli("replay", "--sweep", missing, "--policy", "auto", "--seeds", "1", "--horizon", "10")
    assert r.returncode == 2
    with pytest.raises(ncclbot.InputError) as e:
        ncclbot.replay(missing, "auto", seeds=1, horizon=10)
    assert str(e.value) == r.stderr.strip()
    assert e.value.exit_code == 2 and isinstance(e.value, ValueError)

    r = run_cli("replay", "--sweep", missing, "--policy", "nosuch", "--seeds", "1", "--horizon", "10")
    with pytest.raises(ncclbot.InputError) as e:
        ncclbot.replay(missing, "nosuch", seeds=1, horizon=10)
    assert str(e.value) == r.stderr.strip() and "nosuch" in str(e.value)

    bad = tmp_path / "bad.csv"
    bad.write_text("fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\n"
                   "f,allreduce,2,8,1024,Ring,Simple,0,-3\n")
    r = run_cli("inspect", bad)
    with pytest.raises(ncclbot.InputError) as e:
        ncclbot.read_sweep(bad)
    assert str(e.value) == r.stderr.strip()
    assert f"{bad}:2" in str(e.value)


def test_stats_match_hand_calculations():
    # Holm on p = (0.01, 0.04, untested, 0.03), family of 3: sorted 0.01*3, 0.03*2, 0.04*1 -> running
    # maximum 0.03, 0.06, 0.06.
    h = ncclbot.stats.holm([0.01, 0.04, math.nan, 0.03])
    assert h["adjusted"][0] == pytest.approx(0.03) and h["adjusted"][1] == pytest.approx(0.06)
    assert h["adjusted"][2] is None and h["adjusted"][3] == pytest.approx(0.06)
    assert h["family_size"] == 3 and h["rejected"] == [True, False, None, False]
    # The exact sign-flip test enumerated by hand: 16 sign vectors, |mean| >= the observed one.
    import itertools

    diffs = [0.1, 0.2, -0.05, 0.3]
    observed = abs(sum(diffs)) / 4
    extreme = sum(abs(sum(s * d for s, d in zip(signs, diffs))) / 4 >= observed - 1e-12
                  for signs in itertools.product([1, -1], repeat=4))
    p = ncclbot.stats.permutation(diffs)
    assert p["exact"] and p["p"] == pytest.approx(extreme / 16)
    b = ncclbot.stats.bootstrap([1.0, 2.0, 3.0, 4.0, 5.0], method="percentile", resamples=999, seed=4)
    assert b["estimate"] == 3.0 and 1.0 <= b["low"] < 3.0 < b["high"] <= 5.0


def test_stats_equal_the_cli(run_cli):
    import numpy as np

    x = np.linspace(0.0, 1.0, 41) ** 2
    doc = {"x": x.tolist(), "statistic": "p99", "method": "bca", "resamples": 1999, "seed": 3}
    r = run_cli("stats", "bootstrap", input=json.dumps(doc))
    assert ncclbot.stats.bootstrap(x, statistic="p99", method="bca", resamples=1999, seed=3) == json.loads(r.stdout)


def test_a_dataframe_round_trip_is_exact(sweep_file):
    sw = ncclbot.read_sweep(sweep_file)
    df = sw.to_pandas()
    assert list(df.columns) == ["fabric", "collective", "nodes", "gpus_per_node", "bytes", "algo", "proto",
                                "sample", "time_us", "prior_us"]
    assert len(df) == len(sw) and df["bytes"].dtype == "int64" and df["time_us"].dtype == "float64"
    assert df.attrs["dynamics"] == sw.dynamics and sw.dynamics.startswith("job_warmup=")
    back = ncclbot.Sweep.from_pandas(df)
    assert back.csv == sw.csv == sweep_file.read_text()
    # A sweep built in pandas replays as the same file does.
    assert ncclbot.replay_json(back, "auto", seeds=1, horizon=30) == ncclbot.replay_json(sweep_file, "auto", seeds=1, horizon=30)


def test_a_bad_dataframe_names_the_row_as_a_csv_line(sweep_file):
    df = ncclbot.read_sweep(sweep_file).to_pandas()
    df.loc[3, "time_us"] = -1.0
    with pytest.raises(ncclbot.InputError) as e:
        ncclbot.Sweep.from_pandas(df)
    assert str(e.value).startswith("ncclbot: <DataFrame>:6")  # the dynamics go in as line 1, header 2, row 3 line 6
    with pytest.raises(ncclbot.InputError, match="missing column"):
        ncclbot.Sweep.from_pandas(df.drop(columns=["proto"]))


def test_a_changed_file_is_not_read_behind_the_sweeps_back(tmp_path, sweep_file):
    copy = tmp_path / "copy.csv"
    copy.write_text(sweep_file.read_text())
    sw = ncclbot.read_sweep(copy)
    before = ncclbot.replay_json(sw, "auto", seeds=1, horizon=20)
    copy.write_text("not a sweep\n")
    assert ncclbot.replay_json(sw, "auto", seeds=1, horizon=20) == before


def test_replay_raw_is_the_cli_raw_file(run_cli, sweep_file, tmp_path):
    raw = tmp_path / "raw.csv"
    r = run_cli("replay", "--sweep", sweep_file, "--policy", "auto", "--policy", "thompson", "--seeds", "2",
                "--horizon", "40", "--raw", raw)
    assert r.returncode == 0, r.stderr
    want = pd.read_csv(raw, dtype=str)
    got = ncclbot.replay_raw(sweep_file, ["auto", "thompson"], seeds=2, horizon=40)
    assert list(got.columns) == list(want.columns) and len(got) == len(want)
    assert [float(v) for v in want.online_loss] == got.online_loss.tolist()
    assert [int(v) for v in want.context] == got.context.tolist()
    # The per-replay mean over contexts and seeds is replay()'s online mean.
    summary = ncclbot.replay(sweep_file, ["auto", "thompson"], seeds=2, horizon=40)
    per_config = got.groupby("config").online_loss.mean()
    assert per_config.tolist() == pytest.approx(summary.online_mean.tolist(), rel=1e-12)


def test_replay_is_the_library_call_not_a_command_line(run_cli, sweep_file, monkeypatch):
    # With no command line to run, replay_json still gives the CLI's document, bit for bit, for the
    # options a command line would carry (a delay, a deployment, a node filter, a seed).
    want = run_cli.json("replay", "--sweep", sweep_file, "--policy", "auto", "--policy", "ucb1:c=0.1,n0=4",
                        "--seeds", "2", "--horizon", "100", "--delay", "3", "--as-deployed", "leader",
                        "--nodes", "4", "--seed", "7", "--observation-cost", "0.05")
    from ncclbot import _core

    def no_command_line(*args, **kwargs):
        raise AssertionError("replay_json ran a command line")

    monkeypatch.setattr(_core, "run_command", no_command_line)
    got = ncclbot.replay_json(sweep_file, ["auto", "ucb1:c=0.1,n0=4"], seeds=2, horizon=100, delay=3,
                              as_deployed="leader", nodes=[4], seed=7, observation_cost=0.05)
    assert got == want
    # model likewise, its GPUs per node given and left to the preset.
    for gpus in (None, 4):
        words = [] if gpus is None else ["--gpus-per-node", str(gpus)]
        want = run_cli.json("model", "--fabric", "gb200-ib", "--collective", "reducescatter", "--nodes", "4",
                            "--bytes", "65536", *words)
        assert ncclbot.model(65536, fabric="gb200-ib", collective="reducescatter", nodes=4,
                             gpus_per_node=gpus) == want
    # A bad policy comes back as the CLI's line and exit code, from the call itself.
    r = run_cli("replay", "--sweep", sweep_file, "--policy", "nosuch", "--seeds", "1", "--horizon", "10")
    with pytest.raises(ncclbot.InputError) as e:
        ncclbot.replay_json(sweep_file, "nosuch", seeds=1, horizon=10)
    assert str(e.value) == r.stderr.strip()


def test_a_number_the_call_cannot_hold_gets_the_cli_line(run_cli, sweep_file):
    r = run_cli("model", "--bytes", "1024", "--gpus-per-node", "0")
    with pytest.raises(ncclbot.InputError) as e:  # from the call: a count it holds, the CLI's own check
        ncclbot.model(1024, gpus_per_node=0)
    assert r.returncode == 2 and str(e.value) == r.stderr.strip()
    r = run_cli("replay", "--sweep", sweep_file, "--policy", "auto", "--seeds", "1", "--horizon", "10",
                "--seed", "-1")
    assert r.returncode == 2
    with pytest.raises(ncclbot.InputError) as e:
        ncclbot.replay_json(sweep_file, "auto", seeds=1, horizon=10, seed=-1)
    assert str(e.value) == r.stderr.strip()


def test_every_function_is_a_library_call_not_a_command_line(run_cli, sweep_file, tmp_path, monkeypatch):
    # With no command line to run, each public function still gives what its command gives, bit for
    # bit: tune's and inspect's documents, synth's file, replay_raw's rows, a study's results, the
    # statistics' answers.
    from conftest import REPO
    from ncclbot import _core

    tune_want = run_cli.json("tune", "--sweep", sweep_file, "--policy", "ucb1:c=0.05|0.2,n0=4", "--seeds", "2",
                             "--horizon", "80", "--tune-nodes", "4", "--score-nodes", "16", "--threads", "2",
                             "--delay", "2", "--seed", "3")
    inspect_want = run_cli.json("inspect", sweep_file, "--nodes", "16", "--collectives", "allreduce")
    cli_synth = tmp_path / "cli.csv"
    assert run_cli("synth", "--fabric", "h100-roce", "--seed", "4", "--nodes", "2,4", "--samples", "2",
                   "--shift-rate", "0.01", "--knobs", "channels=0,8", "--out", cli_synth).returncode == 0
    raw_want = tmp_path / "raw.csv"
    assert run_cli("replay", "--sweep", sweep_file, "--policy", "thompson", "--seeds", "2", "--horizon", "40",
                   "--raw", raw_want).returncode == 0
    study = REPO / "tests" / "data" / "study" / "tiny.toml"
    assert run_cli("run", study, "--out", tmp_path / "cli", "--no-figures", "--threads", "2").returncode == 0
    x = [0.3, -0.1, 0.25, 0.4, 0.05, 0.2]
    stats_want = run_cli("stats", "permutation", input=json.dumps({"diffs": x, "method": "monte_carlo",
                                                                  "resamples": 999, "seed": 2}))

    def no_command_line(*args, **kwargs):
        raise AssertionError("a command line ran")

    monkeypatch.setattr(_core, "run_command", no_command_line)
    assert ncclbot.tune(sweep_file, "ucb1:c=0.05|0.2,n0=4", seeds=2, horizon=80, tune_nodes=[4],
                        score_nodes=[16], threads=2, delay=2, seed=3) == tune_want
    assert ncclbot.inspect(sweep_file, nodes=[16], collectives=["allreduce"]) == inspect_want
    held = ncclbot.synth("h100-roce", seed=4, nodes=[2, 4], samples=2, shift_rate=0.01, knobs="channels=0,8")
    assert held.csv == cli_synth.read_text() and held.side == (tmp_path / "cli.sweep.toml").read_text()
    ncclbot.synth("h100-roce", seed=4, nodes=[2, 4], samples=2, shift_rate=0.01, knobs="channels=0,8",
                  out=tmp_path / "py.csv")
    assert (tmp_path / "py.csv").read_bytes() == cli_synth.read_bytes()
    got = ncclbot.replay_raw(sweep_file, "thompson", seeds=2, horizon=40)
    want = pd.read_csv(raw_want, dtype=str)
    assert [float(v) for v in want.online_loss] == got.online_loss.tolist()
    results = ncclbot.run(study, tmp_path / "py", figures=False, threads=2)
    assert results["paths"]["units"] > 0
    assert json.loads((tmp_path / "py" / "results.json").read_text()) == \
        json.loads((tmp_path / "cli" / "results.json").read_text())
    assert ncclbot.stats.permutation(x, method="monte_carlo", resamples=999, seed=2) == json.loads(stats_want.stdout)
    # Errors come from the calls themselves, as the CLI's lines (the statistics name their input).
    with pytest.raises(ncclbot.InputError, match="must be at least 1"):
        ncclbot.synth("h100-roce", gpus_per_node=0)
    with pytest.raises(ncclbot.InputError, match=r"<input>: .*resample"):
        ncclbot.stats.test("holm", p=[0.5], resample=3)
    with pytest.raises(ncclbot.InputError, match="objective"):
        ncclbot.tune(sweep_file, "auto", seeds=1, horizon=10, objective="median")


def test_ope_export_table_and_ingest_are_library_calls(cli, run_cli, tmp_path, monkeypatch):
    # The plugin's own decision log (plugin-check --log) read by ope; a finished study's table; an
    # nccl-tests log of the repository's test data: each call's document, file or sweep is the CLI's.
    import os

    from conftest import REPO
    from ncclbot import _core

    plugin = os.path.join(os.path.dirname(cli), "libnccl-tuner-ncclbot.so")
    if not os.path.exists(plugin):
        pytest.skip("the tuner plugin is not built beside the CLI")
    sweep = tmp_path / "sweep.csv"
    assert run_cli("synth", "--fabric", "h100-ib-a", "--seed", "3", "--nodes", "4", "--collectives", "allreduce",
                   "--samples", "8", "--observation", "off", "--out", sweep).returncode == 0
    log = tmp_path / "d.log"
    r = run_cli("plugin-check", "--plugin", plugin, "--sweep", sweep, "--policy", "egreedy:eps=0.3,decay=0,n0=4",
                "--seed", "4", "--horizon", "300", "--log", log)
    assert r.returncode == 0, r.stderr
    ope_want = run_cli.json("ope", "--log", log, "--policy", "auto", "--policy", "ucb1:c=0.1,n0=1", "--sweep", sweep,
                            "--resamples", "199", "--seed", "5")
    study = REPO / "tests" / "data" / "study" / "tiny.toml"
    assert run_cli("run", study, "--out", tmp_path / "study", "--no-figures", "--threads", "2").returncode == 0
    table_want = run_cli.json("export-table", "--study", tmp_path / "study", "--policy", "UCB1", "--out",
                              tmp_path / "cli.table")
    nccl_log = REPO / "tests" / "data" / "nccl-tests" / "srun_prefixed.txt"
    ingest_want = run_cli.json("ingest", nccl_log, "--fabric", "gh200", "--out", tmp_path / "cli.csv")

    def no_command_line(*args, **kwargs):
        raise AssertionError("a command line ran")

    monkeypatch.setattr(_core, "run_command", no_command_line)
    assert ncclbot.ope(log, ["auto", "ucb1:c=0.1,n0=1"], sweep=sweep, resamples=199, seed=5) == ope_want
    got = ncclbot.export_table(tmp_path / "study", "UCB1", tmp_path / "py.table")
    assert {k: v for k, v in got.items() if k != "out"} == {k: v for k, v in table_want.items() if k != "out"}
    assert (tmp_path / "py.table").read_bytes() == (tmp_path / "cli.table").read_bytes()
    got = ncclbot.ingest(nccl_log, fabric="gh200", out=tmp_path / "py.csv")
    assert {k: v for k, v in got.items() if k != "out"} == {k: v for k, v in ingest_want.items() if k != "out"}
    assert ncclbot.read_sweep(tmp_path / "py.csv").csv == (tmp_path / "cli.csv").read_text()
    with pytest.raises(ncclbot.InputError, match="resamples"):
        ncclbot.ope(log, "auto", resamples=0)
    # telemetry on the same log: the same telemetry.json as the command's, handed back too.
    monkeypatch.undo()
    assert run_cli("telemetry", log, "--out", tmp_path / "tel_cli", "--no-figures").returncode == 0
    monkeypatch.setattr(_core, "run_command", no_command_line)
    got = ncclbot.telemetry(log, tmp_path / "tel_py", figures=False)
    assert (tmp_path / "tel_py" / "telemetry.json").read_bytes() == (tmp_path / "tel_cli" / "telemetry.json").read_bytes()
    assert got["telemetry_document"] == json.loads((tmp_path / "tel_cli" / "telemetry.json").read_text())
    assert got["report_html"] == str(tmp_path / "tel_py" / "report.html")


def test_plan_hipipe_and_merge_are_library_calls(run_cli, sweep_file, tmp_path, monkeypatch):
    from ncclbot import _core

    plan_want = run_cli.json("plan", "--fabric", "h100-ib-a", "--nodes", "2,4", "--collectives", "allreduce",
                             "--arms", "Ring/LL,Tree", "--chunk-bytes", "0,64K", "--out", tmp_path / "cli")
    hipipe_want = run_cli.json("hipipe", "--fabric", "h100-ib-a", "--bytes", "64M", "--nodes", "4")
    replay = ["replay", "--sweep", sweep_file, "--policy", "auto", "--policy", "ucb1:c=0.1,n0=4", "--seeds", "2",
              "--horizon", "60", "--threads", "1"]
    for i in (0, 1):
        assert run_cli(*replay, "--shard", f"{i}/2", "--out", tmp_path / f"p{i}").returncode == 0
    merge_want = run_cli.json("merge", tmp_path / "p1", tmp_path / "p0")

    def no_command_line(*args, **kwargs):
        raise AssertionError("a command line ran")

    monkeypatch.setattr(_core, "run_command", no_command_line)
    got = ncclbot.plan("h100-ib-a", [2, 4], tmp_path / "py", collectives=["allreduce"], arms=["Ring/LL", "Tree"],
                       chunk_bytes=[0, "64K"])
    assert {k: v for k, v in got.items() if k != "out"} == {k: v for k, v in plan_want.items() if k != "out"}
    assert (tmp_path / "py" / "campaign.toml").exists()
    status = ncclbot.plan_status(tmp_path / "py")
    assert status["missing"] == len(got["runs"]) and status["done"] == status["failed"] == 0
    assert ncclbot.hipipe("h100-ib-a", "64M", nodes=4) == hipipe_want
    assert ncclbot.merge([tmp_path / "p1", tmp_path / "p0"]) == merge_want
    with pytest.raises(ncclbot.InputError, match="gpus-per-node"):
        ncclbot.plan("h100-ib-a", [2], tmp_path / "bad", gpus_per_node=0)
    with pytest.raises(ncclbot.InputError, match="bytes"):
        ncclbot.hipipe("h100-ib-a", "0")
