"""The sweep file is a plain CSV: pandas and csv.DictReader read it with no options, its side data
(call dynamics) lives beside it, and the package's reader returns the knob columns."""

import csv

import pytest

import ncclbot

KNOB_CSV = (
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,0,0,0,7\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,8,65536,0,5\n"
    "h100,AllReduce,2,8,1048576,Ring,LL128,4,3840,0,6\n"
)


def test_a_simulated_sweep_reads_in_pandas_and_dictreader_with_no_options(sweep_file):
    import pandas as pd

    df = pd.read_csv(sweep_file)
    assert list(df.columns)[:7] == ["fabric", "collective", "nodes", "gpus_per_node", "bytes", "algo", "proto"]
    with open(sweep_file, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(df) == len(ncclbot.read_sweep(sweep_file))
    assert rows[0]["fabric"] == "h100-ib-a" and float(rows[0]["time_us"]) > 0
    # The dynamics are in the side file, and the package reads them with the CSV.
    side = sweep_file.with_name("sim.sweep.toml")
    assert side.read_text().count("[dynamics]") == 1
    assert ncclbot.read_sweep(sweep_file).dynamics.startswith("job_warmup=")


def test_the_knob_columns_come_back_from_both_readers(tmp_path):
    path = tmp_path / "knobs.csv"
    path.write_text(KNOB_CSV)
    df = ncclbot.read_sweep(path).to_pandas()
    assert list(df["channels"]) == [4, 0, 8] and list(df["chunk_bytes"]) == [3840, 0, 65536]  # Arm order
    assert df["channels"].dtype == "int64"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["chunk_bytes"] for r in rows] == ["0", "65536", "3840"]
    # A DataFrame with knob columns turns back into the same sweep.
    assert ncclbot.Sweep.from_pandas(df).csv == ncclbot.read_sweep(path).csv


def test_a_knob_value_nccl_cannot_take_names_its_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(KNOB_CSV + "h100,AllReduce,2,8,1048576,Ring,Simple,65,0,0,7\n")
    with pytest.raises(ncclbot.InputError, match=r"bad.csv:5: channels must be an integer in \[0, 64\]"):
        ncclbot.read_sweep(path)


def test_to_csv_writes_the_side_file_beside_the_csv(tmp_path, sweep_file):
    sw = ncclbot.read_sweep(sweep_file)
    sw.to_csv(tmp_path / "copy.csv")
    assert (tmp_path / "copy.csv").read_text() == sweep_file.read_text()
    assert (tmp_path / "copy.sweep.toml").read_text() == sweep_file.with_name("sim.sweep.toml").read_text()
    assert ncclbot.read_sweep(tmp_path / "copy.csv").dynamics == sw.dynamics


def test_synth_with_knobs_writes_what_the_cli_writes(tmp_path, run_cli):
    spec = "channels=0,8;chunk=0,64K"
    sw = ncclbot.synth("h100-ib-a", nodes=[2], collectives=["allreduce"], samples=2, knobs=spec)
    r = run_cli("synth", "--fabric", "h100-ib-a", "--nodes", "2", "--collectives", "allreduce", "--samples", "2",
                "--knobs", spec, "--out", str(tmp_path / "k.csv"))
    assert r.returncode == 0, r.stderr
    assert sw.csv == (tmp_path / "k.csv").read_text()
    df = sw.to_pandas()
    assert sorted(set(df["channels"])) == [0, 8] and 65536 in set(df["chunk_bytes"])
