"""Sweeps in Python: read, synthesized, or built from a pandas DataFrame, always held as the
canonical sweep CSV the compiled library wrote (so every command sees exactly the same sweep)."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import tomllib
import weakref
from typing import TYPE_CHECKING, Optional, Sequence

from . import _core
from . import _arguments as kinds
from ._command import call_holds, option_words, path_text, raise_for, run, run_call

if TYPE_CHECKING:
    import pandas as pd

DYNAMICS_PREFIX = "# dynamics: "
COLUMNS = ["fabric", "collective", "nodes", "gpus_per_node", "bytes", "algo", "proto", "sample", "time_us"]
KNOB_COLUMNS = ["channels", "chunk_bytes"]
_DTYPES = {
    "fabric": str,
    "collective": str,
    "algo": str,
    "proto": str,
    "nodes": "int64",
    "gpus_per_node": "int64",
    "bytes": "int64",
    "sample": "int64",
    "channels": "int64",
    "chunk_bytes": "int64",
    "time_us": str,  # parsed by float() below: exact whatever pandas' own float parser does
    "prior_us": str,
}


def side_path(csv_path: str) -> str:
    """The side file beside a sweep CSV (its call dynamics): NAME.csv -> NAME.sweep.toml."""
    head, name = os.path.split(csv_path)
    stem = name[: -len(".csv")] if name.endswith(".csv") and len(name) > len(".csv") else name
    return os.path.join(head, stem + ".sweep.toml")


def _file_state(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size)


class Sweep:
    """A forced-arm sweep: every arm (algorithm, protocol) timed on every context.

    Long format, one row per sample, the columns of the sweep CSV: fabric, collective, nodes,
    gpus_per_node, bytes, algo, proto[, channels, chunk_bytes], sample, time_us[, prior_us]
    (channels and chunk_bytes are an arm's knobs, 0 = NCCL's own). A simulated sweep also carries
    its call dynamics (the side file NAME.sweep.toml beside NAME.csv), kept in `dynamics` and in a
    DataFrame's attrs["dynamics"]. Times are float32 in the library: a value set from pandas is
    rounded to the nearest float32, as reading it from a CSV would.
    """

    def __init__(
        self, csv: str, side: str = "", path: Optional[str] = None, owned_dir: Optional[str] = None
    ) -> None:
        if not isinstance(csv, str) or not isinstance(side, str):  # made by this module, not by hand
            raise kinds.ArgumentError("Sweep", "csv", f"must be the sweep's CSV text, got {kinds.shown(csv)}")
        self._csv = csv
        self._side = side
        self._path = path
        self._state = _file_state(path) if path else None
        self._temp: Optional[str] = None
        self._owned = owned_dir is not None
        if owned_dir:
            weakref.finalize(self, shutil.rmtree, owned_dir, True)

    @property
    def csv(self) -> str:
        """The canonical CSV text (floats in their shortest exact form)."""
        return self._csv

    @property
    def side(self) -> str:
        """The side file's text (NAME.sweep.toml), '' when the sweep has no side data."""
        return self._side

    @property
    def dynamics(self) -> Optional[str]:
        """The call dynamics of a simulated sweep as `key=value` words, or None."""
        table = tomllib.loads(self._side).get("dynamics") if self._side else None
        if not table:
            return None
        return " ".join(f"{key}={value}" for key, value in table.items())

    @property
    def has_prior(self) -> bool:
        """Whether the sweep carries NCCL's cost-model prediction (prior_us), which `auto` needs."""
        return self._csv.split("\n", 1)[0].endswith(",prior_us")

    def __len__(self) -> int:
        """Rows (samples)."""
        return self._csv.count("\n") - 1

    def __repr__(self) -> str:
        where = f" from {self._path}" if self._path and not self._owned else ""
        return f"<ncclbot.Sweep: {len(self)} rows{where}>"

    def file(self) -> str:
        """A path holding this sweep for a command: the file it was read from while that file is
        unchanged, else a private copy that lives as long as this object."""
        if self._path and os.path.exists(self._path) and _file_state(self._path) == self._state:
            return self._path
        if self._temp is None:
            folder = tempfile.mkdtemp(prefix="ncclbot-sweep-")
            weakref.finalize(self, shutil.rmtree, folder, True)
            self._temp = os.path.join(folder, "sweep.csv")
            self._write(self._temp)
        return self._temp

    def _write(self, target: str) -> None:
        with open(target, "w", encoding="utf-8") as f:
            f.write(self._csv)
        side = side_path(target)
        if self._side:
            with open(side, "w", encoding="utf-8") as f:
                f.write(self._side)
        elif os.path.isfile(side) and not os.path.islink(side):
            os.remove(side)  # an earlier sweep's side data would be read with this CSV

    @kinds.checked(path=kinds.path)
    def to_csv(self, path: "os.PathLike[str] | str") -> None:
        """Writes the canonical CSV (the form `ncclbot synth` writes) and, for a sweep with side
        data, its side file NAME.sweep.toml beside it."""
        self._write(path_text(path))

    def to_pandas(self) -> "pd.DataFrame":
        """The sweep as a long-format DataFrame with the CSV's columns; exact (float64 values)."""
        import pandas as pd

        dynamics = self.dynamics
        df = pd.read_csv(io.StringIO(self._csv), dtype=_DTYPES, keep_default_na=False)
        for column in ("time_us", "prior_us"):
            if column in df.columns:
                df[column] = df[column].map(float).astype("float64")
        if dynamics is not None:
            df.attrs["dynamics"] = dynamics
        return df

    @classmethod
    def from_pandas(cls, df: "pd.DataFrame") -> "Sweep":
        """A sweep from a long-format DataFrame with the CSV's columns (prior_us optional; a
        `dynamics` entry in df.attrs restores the call dynamics). It is checked as strictly as a
        CSV file: an error names the row as a line of the CSV, with the header as line 1."""
        import pandas as pd

        if not isinstance(df, pd.DataFrame):
            raise kinds.ArgumentError("from_pandas", "df", f"must be a pandas DataFrame, got {kinds.shown(df)}")
        missing = [c for c in COLUMNS if c not in df.columns]
        if missing:
            raise_for(2, f"ncclbot: <DataFrame>: missing column(s) {', '.join(missing)}")
        knobs = [c for c in KNOB_COLUMNS if c in df.columns]
        columns = COLUMNS + knobs + (["prior_us"] if "prior_us" in df.columns else [])
        text = df[columns].to_csv(index=False, lineterminator="\n")
        dynamics = df.attrs.get("dynamics")
        if dynamics:
            text = DYNAMICS_PREFIX + str(dynamics) + "\n" + text
        code, csv, side, err = _core.canonical_sweep("<DataFrame>", text)
        raise_for(code, err)
        return cls(csv, side)


@kinds.checked(path=kinds.path)
def read_sweep(path: "os.PathLike[str] | str") -> Sweep:
    """Reads a sweep CSV strictly (an error names the file, line and reason)."""
    p = os.path.abspath(path_text(path))
    code, csv, side, err = _core.canonical_sweep(p)
    raise_for(code, err)
    return Sweep(csv, side, path=p)


def _number(value: Optional[float]) -> Optional[float]:
    """A real option as the call's double (an int or a numpy scalar becomes the float the CLI would read)."""
    return None if value is None else float(value)


@kinds.checked(
    fabric=kinds.text, seed=kinds.whole, nodes=kinds.list_of(kinds.whole), collectives=kinds.list_of(kinds.text),
    samples=kinds.whole, min_bytes=kinds.whole, max_bytes=kinds.whole, gpus_per_node=kinds.whole, hipipe=kinds.flag,
    observation=kinds.text, noise_scale=kinds.real, drift=kinds.text, first_use=kinds.text, warmup=kinds.text,
    shift_rate=kinds.real, shift_size=kinds.real, shift_arm_size=kinds.real, knobs=kinds.text, out=kinds.path,
)
def synth(
    fabric: str,
    seed: int = 20260,
    nodes: Optional[Sequence[int]] = None,
    collectives: Optional[Sequence[str]] = None,
    samples: Optional[int] = None,
    min_bytes: Optional[int] = None,
    max_bytes: Optional[int] = None,
    gpus_per_node: Optional[int] = None,
    hipipe: bool = False,
    observation: Optional[str] = None,
    noise_scale: Optional[float] = None,
    drift: Optional[str] = None,
    first_use: Optional[str] = None,
    warmup: Optional[str] = None,
    shift_rate: Optional[float] = None,
    shift_size: Optional[float] = None,
    shift_arm_size: Optional[float] = None,
    knobs: Optional[str] = None,
    out: "Optional[os.PathLike[str] | str]" = None,
) -> Sweep:
    """A simulated forced-arm sweep from a fabric preset, as `ncclbot synth` writes it (to `out`
    when given; else it is held in memory), by the library's call. Options as the CLI's; None
    means the CLI's default.
    `knobs` ("channels=0,8,16;chunk=0,64K") crosses every arm with channel counts and chunk sizes."""
    target = None if out is None else os.path.abspath(path_text(out))
    counts = [samples, gpus_per_node]
    if call_holds(counts, [seed, min_bytes, max_bytes]):
        doc = run_call(
            _core.synth, fabric, seed, out=target, nodes=None if nodes is None else [str(n) for n in nodes],
            collectives=None if collectives is None else list(collectives), samples=samples, min_bytes=min_bytes,
            max_bytes=max_bytes, gpus_per_node=gpus_per_node, hipipe=hipipe, observation=observation,
            noise_scale=_number(noise_scale), drift=drift, first_use=first_use, warmup=warmup,
            shift_rate=_number(shift_rate), shift_size=_number(shift_size), shift_arm_size=_number(shift_arm_size),
            knobs=knobs)
        return Sweep(doc["csv"], doc["side"], path=target)
    # A number the call cannot hold: the command line, whose one-line error names it.
    owned = None if target else tempfile.mkdtemp(prefix="ncclbot-synth-")
    target = target or os.path.join(owned, "sweep.csv")
    options = dict(
        fabric=fabric, seed=seed, out=target, nodes=nodes, collectives=collectives, samples=samples,
        min_bytes=min_bytes, max_bytes=max_bytes, gpus_per_node=gpus_per_node, hipipe=hipipe,
        observation=observation, noise_scale=noise_scale, drift=drift, first_use=first_use, warmup=warmup,
        shift_rate=shift_rate, shift_size=shift_size, shift_arm_size=shift_arm_size, knobs=knobs,
    )
    try:
        run(["synth"] + option_words(options) + ["--json"])
        code, csv, side, err = _core.canonical_sweep(target)
        raise_for(code, err)
    except BaseException:
        if owned:
            shutil.rmtree(owned, True)
        raise
    return Sweep(csv, side, path=target, owned_dir=owned)
