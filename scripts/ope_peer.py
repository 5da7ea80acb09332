#!/usr/bin/env python3
"""Peer check of `ncclbot ope` against the Open Bandit Pipeline (obp): the same point estimates, and the speed.

On each decision log written by the real plugin (`plugin-check --log` over a stationary simulated
sweep), IPS, SNIPS and DR of the targets `auto` and `random` are computed twice: by `ncclbot ope`
and by obp's own estimator classes (obp.ope.InverseProbabilityWeighting,
SelfNormalizedInverseProbabilityWeighting, DoublyRobust, `estimate_policy_value`) on the log as
parsed here in Python (numpy, per include/ncclbot/log/decision_log_format.hpp). The point
estimates must agree to |diff| <= 1e-9 x max(1, |value|) µs (relative above 1 µs, absolute below;
every value here is over 1,000 µs, so in effect relative); otherwise exit 1. Then both sides are
timed side by side, alternating, several times, and the medians are printed:

  - point estimates: `ncclbot ope --resamples 1` (1 is the least it accepts; the process's whole
    wall time: start, reading and checking the log, 2 targets, 1 bootstrap resample, and the replay
    method that `ope` now also runs for each target, which is not compared here) against obp
    (a) with the Python parse of the log and the building of obp's inputs, (b) estimate_policy_value
    alone on inputs built beforehand. obp is timed inside this process: its import (≈1 s) is not
    counted.
  - bootstrap (--boot-resamples B, 0 = skip): `ncclbot ope --resamples B` against obp's
    estimate_interval(n_bootstrap_samples=B) for the same 6 (target, estimator) pairs, on inputs
    built beforehand, once. The intervals differ by method and are not compared: obp resamples the
    per-call terms with the full sample's mean weight (SNIPS) where ncclbot renormalises each
    resample, and the random streams differ.

What is fed to obp: action = the slot played (algo*3+proto, 21 actions, NCCL's cost-table order),
reward = the measured latency (µs), pscore = the logged propensity, action_dist (n, 21, 1) = the
target's probabilities in the call's context, estimated_rewards_by_reg_model (n, 21, 1) = ncclbot's
reward model (src/ope/off_policy.cpp reward_model(): the logged mean of (context, arm) where the log
holds calls of it, else NCCL's cost times the log's overall ratio of measured latency to cost; 0 on
arms NCCL cannot run, where every target's probability is 0). obp maximises reward, but these
three estimators are weighted means that do not care which way is better, so latency as the reward
gives ncclbot's numbers (the mean latency per call the target would have had).
Targets: `auto` = probability 1 on the argmin of the context's logged cost table with NCCL's tie
rule (strict <, slot order: numpy's argmin, first minimum), checked against the record's nccl_slot;
`random` = 1/K on each of the context's K usable arms (cost >= 0 and finite).
Calls are joined to contexts by (collective, bytes, nodes, ranks), the first context record of a
key winning, as ope_data() does.

Usage (from the repository root, after building build/ncclbot and build/libnccl-tuner-ncclbot.so):
    python3 scripts/ope_peer.py                    # ~10^6 logged calls, ε-greedy and random logs, 5 repetitions
                                                   # each, 99 bootstrap resamples (~75 s on the 2-core VM)
    python3 scripts/ope_peer.py --quick            # ~10^4 calls, seconds
    python3 scripts/ope_peer.py --calls 300000 --reps 3 --boot-resamples 0 --behaviour random
If obp is not importable by the running Python, the script re-runs itself with
build-peer/venv/bin/python when that exists.

Installing obp (0.5.7, the latest; it declares Python < 3.11 and depends on PyTorch, and only an
sdist is published). What `obp.ope.estimators` really imports: numpy, scikit-learn (sklearn.utils),
scipy (obp/ope/helper.py) and, through obp/utils.py, pandas and torch. The commands used on the
2-core Intel VM (Python 3.11.7), into a virtual environment under build-peer/ (gitignored):
    python3 -m venv build-peer/venv
    build-peer/venv/bin/pip install --no-deps --ignore-requires-python obp==0.5.7
    build-peer/venv/bin/pip install --only-binary=:all: numpy==1.23.5 scipy==1.9.3 scikit-learn==1.1.3 pandas==1.5.2
(the numpy/scipy/scikit-learn/pandas versions are the ones obp 0.5.7 pins in its pyproject.toml.)
PyTorch is not installed: PyPI's Linux torch wheel is ~540 MB plus several GB of CUDA libraries, and
obp.ope's numpy estimators never call it. Without torch `import obp` fails (obp/__init__.py imports
obp.policy, which builds torch networks, and obp/utils.py has `import torch` for its tensor
checks), so this script imports obp's own modules obp.ope.estimators -> obp.utils, obp.ope.helper
from the installed package without running obp/__init__.py (which imports obp.dataset, obp.policy
and obp.simulator) and obp/ope/__init__.py (every estimator family and the meta classes, which need
matplotlib and seaborn), with a placeholder `torch` module present only while
obp.utils is imported: it has the two names obp/utils.py touches at import (torch.Tensor, a class
nothing is an instance of; torch.tensor, which raises) and raises on any other attribute, so a
torch code path would fail loudly instead of running. obp's code itself runs unchanged. Where
torch and the rest of obp's dependencies are installed, obp is imported the ordinary way
(`from obp import ope`); the line printed first says which way was taken.
"""
import argparse
import csv
import importlib
import importlib.util
import json
import math
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import types

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(REPO, "build-peer", "venv", "bin", "python")
INSTALL_HINT = ("python3 -m venv build-peer/venv && build-peer/venv/bin/pip install --no-deps "
                "--ignore-requires-python obp==0.5.7 && build-peer/venv/bin/pip install --only-binary=:all: "
                "numpy==1.23.5 scipy==1.9.3 scikit-learn==1.1.3 pandas==1.5.2")
NUM_ARMS = 21  # NCCL's cost table: kNumNcclArms, slot = algo * 3 + proto
EGREEDY = "egreedy:eps=0.3,decay=0,n0=4"
TARGETS = ["auto", "random"]
ESTIMATORS = ["IPS", "SNIPS", "DR"]
TOLERANCE = 1e-9


# ------------------------------------------------------------------------------------------ obp


class _TorchPlaceholder(types.ModuleType):
    """Stands in for torch while obp/utils.py is imported; any use beyond its import fails."""

    class Tensor:  # `isinstance(x, torch.Tensor)` is False for every numpy input
        pass

    @staticmethod
    def tensor(*args, **kwargs):
        raise RuntimeError("ope_peer: obp called torch.tensor, but torch is not installed")

    def __getattr__(self, name):
        raise AttributeError(f"ope_peer: obp used torch.{name}, but torch is not installed")


def load_obp():
    """(estimators module, obp version, how it was imported); raises ImportError when obp is absent."""
    spec = importlib.util.find_spec("obp")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'obp'")
    root = list(spec.submodule_search_locations)[0]
    have_torch = importlib.util.find_spec("torch") is not None
    if have_torch:
        try:
            import obp
            from obp import ope as estimators
            return estimators, obp.__version__, "import obp, the ordinary way"
        except ImportError:  # some plotting or learning dependency is missing: the minimal route
            for name in [m for m in sys.modules if m == "obp" or m.startswith("obp.")]:
                del sys.modules[name]
    for name, path in (("obp", root), ("obp.ope", os.path.join(root, "ope"))):
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__path__ = [path]
            module.__package__ = name
            module.__file__ = os.path.join(path, "__init__.py")
            sys.modules[name] = module
    if not have_torch:
        sys.modules["torch"] = _TorchPlaceholder("torch")
        try:
            importlib.import_module("obp.utils")
        finally:
            del sys.modules["torch"]  # obp.utils keeps its reference; nothing else sees a torch
    estimators = importlib.import_module("obp.ope.estimators")
    version = importlib.import_module("obp.version").__version__
    return estimators, version, ("obp.ope.estimators without obp/__init__.py"
                                 + ("" if have_torch else ", torch absent: a placeholder while obp.utils imports"))


def obp_or_exit():
    try:
        return load_obp()
    except ImportError as e:
        venv = os.path.dirname(os.path.dirname(VENV_PYTHON))
        if (os.path.exists(VENV_PYTHON) and os.path.realpath(sys.prefix) != os.path.realpath(venv)
                and not os.environ.get("OPE_PEER_REEXEC")):
            os.environ["OPE_PEER_REEXEC"] = "1"
            os.execv(VENV_PYTHON, [VENV_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        print(f"ope_peer: cannot import obp ({e}); install it into a venv with: {INSTALL_HINT}", file=sys.stderr)
        sys.exit(2)


# ------------------------------------------------------------------------------------ the log


def fnv1a64_rows(rows, np):
    """FNV-1a 64 of every row of a (n, k) uint8 array, vectorised over rows."""
    h = np.full(rows.shape[0], 0xCBF29CE484222325, dtype=np.uint64)
    prime = np.uint64(0x100000001B3)
    for j in range(rows.shape[1]):
        h ^= rows[:, j].astype(np.uint64)
        h *= prime  # wraps modulo 2^64, as the C++ does
    return h


def parse_log(path, np):
    """The decision log as numpy arrays: header, calls (dict of columns), contexts (list of dicts)."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 16 or buf[:8] != b"NCBTLOG\n":
        raise ValueError(f"{path}: not an ncclbot decision log")
    version, header_bytes = struct.unpack_from("<II", buf, 8)
    if version not in (1, 2, 3, 4, 5):
        raise ValueError(f"{path}: decision log version {version}, this script reads versions 1 to 5")
    rs = 80 if version >= 5 else 72  # a call record's bytes: version 5 adds the user tag
    if header_bytes < 16 or header_bytes % 8 or header_bytes > len(buf):
        raise ValueError(f"{path}: damaged header")
    header = {}
    for line in buf[16:header_bytes].decode().split("\n"):
        line = line.strip("\0")
        if line:
            key, _, value = line.partition("=")
            header[key] = value
    raw = np.frombuffer(buf, dtype=np.uint8)
    end, at = len(buf), header_bytes
    call_runs, context_starts, dropped = [], [], 0
    window = 1 << 16
    while at < end:
        if end - at < 8:
            dropped = end - at
            break
        kind, size = struct.unpack_from("<II", buf, at)
        if kind == 3 and size == rs + 16:  # a knob call: decided over knob arms, as `ope` refuses it
            raise ValueError(f"{path}: byte {at}: a knob call record (a knob-mode log): off-policy "
                             "estimates over channels and chunk sizes are not built")
        want = {1: rs, 2: 136}.get(kind)
        if want is None or size != want:
            raise ValueError(f"{path}: byte {at}: unknown record (kind {kind}, {size} bytes)")
        if size > end - at:
            dropped = end - at  # a killed job's last, partial record
            break
        if kind == 2:
            context_starts.append(at)
            at += 136
            continue
        # A run of call records: their (kind, size) words at rs-byte strides, a window at a time.
        m = min(window, (end - at) // rs)
        words = np.ndarray((m, 2), dtype="<u4", buffer=buf, offset=at, strides=(rs, 4))
        ok = (words[:, 0] == 1) & (words[:, 1] == rs)
        k = m if ok.all() else int(np.argmin(ok))
        call_runs.append(raw[at:at + rs * k].reshape(k, rs))
        at += rs * k
    rec = np.concatenate(call_runs) if call_runs else np.zeros((0, rs), np.uint8)  # one row a call record
    if not np.array_equal(fnv1a64_rows(rec[:, :rs - 8], np), rec[:, rs - 8:rs].copy().view("<u8")[:, 0]):
        raise ValueError(f"{path}: a call record's checksum does not match (the file is damaged)")
    # Version 2: CUDA-graph replays are no decisions; version 3: calls NCCL ran with another arm than
    # the decided one, and before it their NaN probabilities (docs/ope.md "Calls NCCL ran otherwise");
    # version 5: calls NCCL ran with one of its symmetric kernels.
    rec = rec[(rec[:, 59] & 7) == 0]
    if version == 2:
        rec = rec[~np.isnan(rec[:, 40:48].copy().view("<f8")[:, 0])]
    calls = {
        "call_index": rec[:, 16:24].copy().view("<u8")[:, 0],
        "bytes": rec[:, 24:32].copy().view("<u8")[:, 0],
        "latency_us": rec[:, 32:40].copy().view("<f8")[:, 0],
        "propensity": rec[:, 40:48].copy().view("<f8")[:, 0],
        "nodes": rec[:, 48:52].copy().view("<u4")[:, 0],
        "ranks": rec[:, 52:56].copy().view("<u4")[:, 0],
        "collective": rec[:, 56].astype(np.int64),
        "slot": rec[:, 57].view(np.int8).astype(np.int64),
        "key": np.ascontiguousarray(np.concatenate([rec[:, 24:32], rec[:, 48:57]], axis=1)),  # as below
    }
    ctx_rec = raw[np.array(context_starts, dtype=np.int64)[:, None] + np.arange(136)].reshape(-1, 136)
    if not np.array_equal(fnv1a64_rows(ctx_rec[:, :128], np), ctx_rec[:, 128:136].copy().view("<u8")[:, 0]):
        raise ValueError(f"{path}: a context record's checksum does not match (the file is damaged)")
    contexts = []
    for at in context_starts:
        b = raw[at:at + 136]
        nbytes, nodes, ranks, coll, nccl_slot = struct.unpack_from("<QIIBb", buf, at + 16)
        contexts.append({"bytes": nbytes, "nodes": nodes, "ranks": ranks, "collective": coll,
                         "nccl_slot": nccl_slot, "cost": np.array(struct.unpack_from("<21f", buf, at + 40)),
                         "key": bytes(b[16:33])})  # u64 bytes, u32 nodes, u32 ranks, u8 collective
    if np.any((calls["slot"] < 0) | (calls["slot"] >= NUM_ARMS)):
        raise ValueError(f"{path}: a call's arm is no arm")
    return header, calls, contexts, dropped


def ope_inputs(calls, contexts, np):
    """ope_data() and reward_model() of src/ope/off_policy.cpp, and the targets, as obp's inputs."""
    index, cost, nccl_slot = {}, [], []
    for c in contexts:
        if c["key"] not in index:  # the first context record of a key wins
            index[c["key"]] = len(cost)
            cost.append(c["cost"])
            nccl_slot.append(c["nccl_slot"])
    cost = np.array(cost, dtype=np.float32).astype(np.float64)  # float32 in the log
    usable = (cost >= 0.0) & np.isfinite(cost)
    nc = len(cost)
    keys, inverse = np.unique(calls["key"].view(np.dtype((np.void, 17)))[:, 0], return_inverse=True)
    key_to_context = np.array([index.get(bytes(k), -1) for k in keys], dtype=np.int64)
    ctx = key_to_context[inverse.reshape(-1)]
    if np.any(ctx < 0):
        raise ValueError("a call without a context record holding its cost table")
    action, reward, pscore = calls["slot"], calls["latency_us"], calls["propensity"]
    if not np.all((pscore > 0.0) & (pscore <= 1.0)):
        raise ValueError("a propensity outside (0, 1]")
    if not (np.all(usable[ctx, action]) and np.all((reward > 0.0) & np.isfinite(reward))):
        raise ValueError("an arm NCCL could not run, or a latency that is no time")
    cell = ctx * NUM_ARMS + action
    total = np.bincount(cell, weights=reward, minlength=nc * NUM_ARMS).reshape(nc, NUM_ARMS)
    count = np.bincount(cell, minlength=nc * NUM_ARMS).reshape(nc, NUM_ARMS)
    prior = cost[ctx, action]
    positive = prior > 0.0
    ratio = reward[positive].sum() / prior[positive].sum() if prior[positive].sum() > 0 else 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(count > 0, total / np.maximum(count, 1), cost * ratio)
    q = np.where(usable, q, 0.0)  # ncclbot: NaN there; every target gives those arms probability 0
    # Targets, per context: auto = NCCL's argmin (strict <, slot order), random = uniform on usable.
    auto_slot = np.argmin(np.where(usable, cost, np.inf), axis=1)
    auto_vs_nccl = int(np.sum(auto_slot != np.array(nccl_slot)))
    pi = {"auto": np.zeros((nc, NUM_ARMS)), "random": usable / usable.sum(axis=1, keepdims=True)}
    pi["auto"][np.arange(nc), auto_slot] = 1.0
    seen = count > 0
    for name, p in pi.items():
        unseen = (p > 0) & ~seen
        if unseen.any():
            x, s = np.argwhere(unseen)[0]
            raise ValueError(f"target {name} plays slot {s} in context {x}, which the log never shows played "
                             "(a zero propensity; ncclbot ope refuses it too)")
    return {"action": action, "reward": reward, "pscore": pscore,
            "q": q[ctx][:, :, None],
            "action_dist": {name: p[ctx][:, :, None] for name, p in pi.items()},
            "contexts": nc, "auto_vs_nccl_slot": auto_vs_nccl}


def obp_estimates(est, inputs):
    """obp's estimate_policy_value for every target and estimator: {(target, name): value}."""
    out = {}
    for target in TARGETS:
        dist = inputs["action_dist"][target]
        common = dict(reward=inputs["reward"], action=inputs["action"], pscore=inputs["pscore"], action_dist=dist)
        out[(target, "IPS")] = float(est.InverseProbabilityWeighting().estimate_policy_value(**common))
        out[(target, "SNIPS")] = float(
            est.SelfNormalizedInverseProbabilityWeighting().estimate_policy_value(**common))
        out[(target, "DR")] = float(est.DoublyRobust().estimate_policy_value(
            estimated_rewards_by_reg_model=inputs["q"], **common))
    return out


def obp_intervals(est, inputs, resamples):
    for target in TARGETS:
        dist = inputs["action_dist"][target]
        common = dict(reward=inputs["reward"], action=inputs["action"], pscore=inputs["pscore"], action_dist=dist,
                      n_bootstrap_samples=resamples, random_state=0)
        est.InverseProbabilityWeighting().estimate_interval(**common)
        est.SelfNormalizedInverseProbabilityWeighting().estimate_interval(**common)
        est.DoublyRobust().estimate_interval(estimated_rewards_by_reg_model=inputs["q"], **common)


# ----------------------------------------------------------------------------------- commands


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ope_peer: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


class Clock:
    """Wall and CPU (user + system) seconds of a block: this process's, or its children's."""

    def __init__(self, children=False):
        self.who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF

    def __enter__(self):
        r = resource.getrusage(self.who)
        self.cpu0, self.wall0 = r.ru_utime + r.ru_stime, time.perf_counter()
        return self

    def __exit__(self, *exc):
        r = resource.getrusage(self.who)
        self.wall = time.perf_counter() - self.wall0
        self.cpu = r.ru_utime + r.ru_stime - self.cpu0


def ncclbot_ope(ncclbot, log, resamples):
    """((wall s, CPU s), JSON document) of one `ncclbot ope` process."""
    cmd = [ncclbot, "ope", "--log", log, "--resamples", str(resamples), "--json"]
    for t in TARGETS:
        cmd += ["--policy", t]
    with Clock(children=True) as c:
        text = run(cmd)
    return (c.wall, c.cpu), json.loads(text)


def count_contexts(sweep):
    with open(sweep, newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return len({(r["collective"], r["nodes"], r["gpus_per_node"], r["bytes"]) for r in rows})


def median(xs):
    return statistics.median(xs)


def spread(xs):
    return f"[{min(xs):.2f}, {max(xs):.2f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--calls", type=int, default=1_000_000, help="logged calls, about (default 10^6)")
    ap.add_argument("--quick", action="store_true", help="10^4 calls, 3 repetitions, 99 bootstrap resamples")
    ap.add_argument("--reps", type=int, default=5, help="timing repetitions (medians reported; default 5)")
    ap.add_argument("--boot-resamples", type=int, default=99,
                    help="bootstrap row: ncclbot --resamples B against obp's estimate_interval (0 = skip)")
    ap.add_argument("--behaviour", action="append", default=None,
                    help=f"behaviour policy of the log (repeatable; default {EGREEDY} and random)")
    ap.add_argument("--work", default="", help="directory for the sweep and logs, kept (default: a temporary one, removed)")
    ap.add_argument("--json", default="", help="write the results to this JSON file")
    args = ap.parse_args()
    if args.quick:
        args.calls, args.reps, args.boot_resamples = 10_000, 3, 99
    est, obp_version, how = obp_or_exit()
    import numpy as np

    ncclbot = os.path.join(args.build, "ncclbot")
    plugin = os.path.join(args.build, "libnccl-tuner-ncclbot.so")
    for p in (ncclbot, plugin):
        if not os.path.exists(p):
            sys.exit(f"ope_peer: {p} is missing: build first (cmake --preset ..., ninja)")
    work = args.work or tempfile.mkdtemp(prefix="ncclbot-ope-peer-")
    os.makedirs(work, exist_ok=True)
    try:
        check(args, est, obp_version, how, np, ncclbot, plugin, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)  # the logs: ~70 MB each at 10^6 calls


def check(args, est, obp_version, how, np, ncclbot, plugin, work):
    behaviours = args.behaviour or [EGREEDY, "random"]
    print(f"obp {obp_version} ({how}), numpy {np.__version__}, Python {sys.version.split()[0]}; work dir {work}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (timings need an otherwise idle machine)")
    sweep = os.path.join(work, "sweep.csv")
    run([ncclbot, "synth", "--fabric", "h100-ib-a", "--seed", "3", "--nodes", "4", "--collectives",
         "allreduce,allgather", "--samples", "8", "--observation", "off", "--out", sweep])
    n_contexts = count_contexts(sweep)
    horizon = max(1, math.ceil(args.calls / n_contexts))
    results, failed = [], False
    for behaviour in behaviours:
        log = os.path.join(work, "log-" + behaviour.split(":")[0] + ".bin")
        if os.path.exists(log):
            os.remove(log)
        # If plugin-check drives the plugin faster than its log writer drains (its 1 MiB buffer is
        # written every 50 ms or when half full; Thompson sampling's integrals take 10-20 us each on
        # the writer), the plugin drops records (it warns, and says how many): the log then holds
        # fewer calls than were driven. Both sides read the same log, so the check is unaffected;
        # the horizon is raised (twice at most) to log about --calls.
        h = horizon
        for attempt in range(3):
            if os.path.exists(log):
                os.remove(log)
            t0 = time.perf_counter()
            run([ncclbot, "plugin-check", "--plugin", plugin, "--sweep", sweep, "--policy", behaviour,
                 "--seed", "0", "--horizon", str(h), "--log", log])
            t_log = time.perf_counter() - t0
            header, calls, contexts, dropped = parse_log(log, np)
            logged = len(calls["slot"])
            if attempt == 2 or logged >= 0.97 * n_contexts * horizon:
                break
            h = math.ceil(h * n_contexts * horizon / max(logged, 1))
        size_mb = os.path.getsize(log) / 1e6
        print(f"\nbehaviour {behaviour}: {n_contexts} contexts x {h} calls driven by plugin-check, "
              f"{logged} logged ({n_contexts * h - logged} dropped by the plugin's full buffer) -> {log} "
              f"({size_mb:.1f} MB, written in {t_log:.1f} s)")

        # Agreement of the point estimates.
        inputs = ope_inputs(calls, contexts, np)
        n = len(inputs["action"])
        print(f"  parsed: {n} calls, {inputs['contexts']} contexts, behaviour '{header.get('policy')}', "
              f"{dropped} tail bytes dropped; auto's argmin differs from the logged nccl_slot in "
              f"{inputs['auto_vs_nccl_slot']} contexts")
        mine = obp_estimates(est, inputs)
        _, doc = ncclbot_ope(ncclbot, log, 1)
        if doc["calls"] != n or doc["contexts"] != inputs["contexts"]:
            print(f"  FAIL: ncclbot ope read {doc['calls']} calls / {doc['contexts']} contexts, this script "
                  f"{n} / {inputs['contexts']}")
            failed = True
        print(f"  {'target':8s} {'estimator':9s} {'ncclbot ope (us)':>22s} {'obp (us)':>22s} {'|diff|':>10s} "
              f"{'rel diff':>10s}")
        worst = 0.0
        agreement, others = [], set()
        compared = {(p["policy"], e["name"]) for p in doc["policies"] for e in p["estimators"]}
        if not set(mine) <= compared:
            print(f"  FAIL: ncclbot ope printed no {sorted(set(mine) - compared)}")
            failed = True
        for p in doc["policies"]:
            for e in p["estimators"]:
                if e["name"] not in ESTIMATORS:
                    others.add(e["name"])  # e.g. the replay method: not computed with obp here
                    continue
                theirs = e["value_us"]
                ours = mine[(p["policy"], e["name"])]
                diff = abs(theirs - ours)
                bound = TOLERANCE * max(1.0, abs(theirs))
                worst = max(worst, diff / max(1.0, abs(theirs)))
                ok = diff <= bound
                failed |= not ok
                agreement.append({"target": p["policy"], "estimator": e["name"], "ncclbot_us": theirs,
                                  "obp_us": ours, "abs_diff_us": diff})
                print(f"  {p['policy']:8s} {e['name']:9s} {theirs:22.12f} {ours:22.12f} {diff:10.2e} "
                      f"{diff / max(1.0, abs(theirs)):10.2e}{'' if ok else '  FAIL'}")
        print(f"  largest |diff| / max(1, |value|): {worst:.2e} (tolerance {TOLERANCE:g})"
              + (f"; ncclbot ope also printed {', '.join(sorted(others))} (not compared, but in its time)"
                 if others else ""))
        del inputs, calls, contexts

        # Speed, side by side, alternating.
        t = {k: [] for k in ("ncclbot", "parse", "inputs", "obp")}
        for _ in range(args.reps):
            t["ncclbot"].append(ncclbot_ope(ncclbot, log, 1)[0])
            with Clock() as c_parse:
                _, calls, contexts, _ = parse_log(log, np)
            with Clock() as c_inputs:
                inputs = ope_inputs(calls, contexts, np)
            with Clock() as c_obp:
                obp_estimates(est, inputs)
            for k, c in (("parse", c_parse), ("inputs", c_inputs), ("obp", c_obp)):
                t[k].append((c.wall, c.cpu))
            del calls, contexts
        t["full"] = [tuple(map(sum, zip(a, b, c))) for a, b, c in zip(t["parse"], t["inputs"], t["obp"])]
        nb_wall = median([w for w, _ in t["ncclbot"]])
        nb_cpu = median([c for _, c in t["ncclbot"]])
        print(f"\n  speed on {n} calls, 2 targets x 3 estimators, median of {args.reps} (wall range); CPU = user + "
              "system, one thread each:")
        print(f"  {'':55s} {'wall s':>7s} {'range':>15s} {'CPU s':>7s} {'obp/ncclbot wall':>17s} {'CPU':>6s}")
        rows = [("ncclbot ope --resamples 1 (whole process)", "ncclbot", False),
                ("obp: Python parse + inputs + estimate_policy_value", "full", True),
                ("obp: estimate_policy_value alone (inputs built)", "obp", True),
                ("  of which: Python parse of the log (numpy)", "parse", False),
                ("  of which: inputs (join, reward model, action_dist)", "inputs", False)]
        for label, key, ratio in rows:
            walls, cpus = [w for w, _ in t[key]], [c for _, c in t[key]]
            r = (f"{median(walls) / nb_wall:16.1f}x {median(cpus) / nb_cpu:5.1f}x" if ratio else "")
            print(f"  {label:55s} {median(walls):7.3f} {spread(walls):>15s} {median(cpus):7.3f} {r}")
        timing = {"reps": args.reps, **{f"{k}_wall_cpu_s": v for k, v in t.items()}}
        if args.boot_resamples > 0:
            b = args.boot_resamples
            (nb_b, nb_b_cpu), _ = ncclbot_ope(ncclbot, log, b)
            with Clock() as c:
                obp_intervals(est, inputs, b)
            print(f"  bootstrap, {b} resamples, once: ncclbot ope --resamples {b} {nb_b:.3f} s (CPU {nb_b_cpu:.3f}); "
                  f"obp estimate_interval x 6 (inputs built) {c.wall:.3f} s (CPU {c.cpu:.3f}): "
                  f"{c.wall / nb_b:.1f}x wall, {c.cpu / nb_b_cpu:.1f}x CPU")
            timing.update({"bootstrap_resamples": b, "ncclbot_bootstrap_wall_cpu_s": (nb_b, nb_b_cpu),
                           "obp_intervals_wall_cpu_s": (c.wall, c.cpu)})
        del inputs
        results.append({"behaviour": behaviour, "calls": n, "contexts": n_contexts, "horizon": h,
                        "log_mb": size_mb, "agreement": agreement, "worst_rel_diff": worst, "timing": timing})
    print(f"\nload average now {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"obp": obp_version, "import": how, "numpy": np.__version__, "python": sys.version.split()[0],
                       "tolerance": TOLERANCE, "results": results}, f, indent=1)
    if failed:
        print("\nope_peer: FAIL: ncclbot ope and obp disagree (see above)", file=sys.stderr)
        sys.exit(1)
    print("\nope_peer: IPS, SNIPS and DR of ncclbot ope equal obp's within 1e-9 x max(1, |value|) us")


if __name__ == "__main__":
    main()
