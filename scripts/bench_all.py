#!/usr/bin/env python3
"""Runs every benchmark behind the README's performance table and prints that table.

Command (from the repository root, after building into build/):
    python3 scripts/bench_all.py [--build build] [--quick] [--json OUT.json] [--update-readme]

Each row is one benchmark program run here, now, on this machine, with its goal (the speed targets
the project set, "—" where none is set) and whether it is met or by how much it falls short; the first line says which
machine (CPU model, cores, memory, GPU), the date, the commit and the load average before the
first benchmark (other work on the machine slows every row), because every number depends on them. Rows:
  replay      `ncclbot bench --backend cpu --threads 1 --arms 12` for UCB1 and Thompson sampling, and
              512 (knob arms) for UCB1 and OSUB
  statistics  `scripts/bench_stats.py --threads 1` (ncclbot against SciPy on the same inputs)
  plugin      `plugin_overhead_bench` (thread CPU time per getCollInfo, every live policy, and its heap
              allocations per call), over 8 slots and over 512 knob arms; and in leader mode (2 rank
              processes, each call timed alone: the leader's and the costliest follower's cost)
  feedback    `plugin_feedback_delay` at 4, 8 and 64 ranks (leader mode, nothing in flight)
  synth       `ncclbot synth --fabric h100-ib-a`, wall time of the whole process (median)
  GPU         `ncclbot bench --backend cuda`, where `nvidia-smi -L` lists a GPU; otherwise the
              row says that none was found
--quick cuts repetitions (a smoke run; its numbers are noisier). --update-readme replaces the
table between the README's `<!-- bench_all:begin -->` and `<!-- bench_all:end -->` lines.
A benchmark that fails stops the script (exit 1, naming the command); bad usage (no build at
--build, a --json target that is a folder or lies in no folder, no markers in the README) exits 2
before any benchmark runs.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- bench_all:begin -->", "<!-- bench_all:end -->"
FEEDBACK_RANKS = (4, 8, 64)
# The knob lists of the plugin's 512-arm row (docs/plugin.md "Overhead"): 8 channel counts x 8 chunk
# sizes for each protocol, 512 arms over the benchmark's 8 slots.
PLUGIN_KNOBS = ("channels=0,2,4,8,16,24,32,64;chunk.LL=0,4K,8K,16K,32K,64K,128K,256K;"
                "chunk.LL128=0,1920,3840,7680,15360,30720,61440,122880;chunk.Simple=0,64K,128K,256K,512K,1M,2M,4M")


class BenchError(Exception):
    """A benchmark failed or printed what this script cannot read: exit 1."""


class UsageProblem(BenchError):
    """Nothing to run (no build at --build) or no place for the table in the README: exit 2."""


def run(cmd):
    """Runs one benchmark program; its stdout, or a BenchError naming the command when it fails."""
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise BenchError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return done.stdout


def run_json(cmd):
    """Runs a benchmark that prints one JSON document; a failure names the command."""
    out = run(cmd)
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        raise BenchError(f"{' '.join(cmd)}: not JSON on stdout ({e})") from None


def sci(x):
    """5.1×10⁷ style, as the docs write rates."""
    exponent = len(str(int(abs(x)))) - 1 if abs(x) >= 1 else 0
    mantissa = x / 10 ** exponent
    if round(mantissa, 1) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    superscript = str(exponent).translate(str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"))
    return f"{mantissa:.1f}×10{superscript}"


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


# --- one function per row: the parsed output of its benchmark in, the table row out ---
# A row is (what, result, goal, verdict): the goal is the project's target for that number (the
# speed issue's), "—" where none is set; the verdict says "met", or by how much each part falls short.

NO_GOAL = ("—", "—")


def judged(parts):
    """The goal text and verdict of (name, value, target, kind, fmt) parts; kind "min": value >= target
    is met, "max": value <= target. A part short of its target is named with the factor it misses by
    (or, against a target or value of 0, with its value)."""
    goals, short = [], []
    for name, value, target, kind, fmt in parts:
        goals.append(f"{name} = 0" if kind == "max" and target == 0 else
                     f"{name} {'≥' if kind == 'min' else '≤'} {fmt(target)}")
        met = value >= target if kind == "min" else value <= target
        if not met and (target == 0 or value == 0):  # no factor to give: the value itself
            short.append(f"{name} {fmt(value)}")
        elif not met:
            factor = target / value if kind == "min" else value / target
            short.append(f"{name} {factor:.1f}× short")
    return ", ".join(goals), ("met" if not short else "short: " + ", ".join(short))


def ns(v):
    return f"{v:.0f} ns"


def steps_per_s(doc, policies):
    """`ncclbot bench --json`'s rate of each policy, by its name (the spec without its keys)."""
    rate = {r["policy"].split(":")[0]: r["steps_per_s"] for r in doc["results"]}
    missing = set(policies) - rate.keys()
    if missing:
        raise BenchError(f"ncclbot bench printed no result for {', '.join(sorted(missing))}")
    return rate


def replay_row(doc, arms=12):
    """12 arms: UCB1 and Thompson sampling; 512 knob arms: UCB1 and the structured learner OSUB."""
    knobs = arms > 21
    second = "osub" if knobs else "thompson"
    rate = steps_per_s(doc, ("ucb1", second))
    label = "OSUB" if knobs else "Thompson"
    goal = (1e8, 4e7) if not knobs else (5e6, 2e7)
    parts = [("UCB1", rate["ucb1"], goal[0], "min", sci), (label, rate[second], goal[1], "min", sci)]
    return (f"CPU replay, {arms} {'knob arms' if knobs else 'arms'}, 1 thread "
            f"(`ncclbot bench --backend cpu --threads 1 --arms {arms}`)",
            f"UCB1 {sci(rate['ucb1'])}, {label} {sci(rate[second])} steps/s", *judged(parts))


def stats_row(doc):
    bootstrap = [r["speedup_wall"] for r in doc["rows"] if r["case"].startswith("bootstrap_")]
    exact = [r for r in doc["rows"] if r["case"] == "permutation_exact"]
    if not bootstrap or not exact:
        raise BenchError("scripts/bench_stats.py printed no bootstrap or no permutation case")
    return ("bootstrap, 10⁴ contexts × 10⁴ resamples, 1 thread (`scripts/bench_stats.py`)",
            f"{span(bootstrap, lambda v: f'{v:.0f}')}× SciPy {doc['scipy']} (mean and p99, percentile and BCa); "
            f"exact sign-flip test on 20 pairs {sci(exact[0]['speedup_wall'])}×",
            *judged([("every bootstrap cell", min(bootstrap), 30.0, "min", lambda v: f"{v:.0f}× SciPy")]))


def plugin_row(doc, knobs=False):
    """The live policies with feedback: over 8 slots (`knobs` False), or their `getCollInfo` alone over
    512 knob arms (a run with --knobs). Goals: the slowest at most 50 ns over slots, 100 ns over knob
    arms; no heap allocation in any timed call (allocations_per_call, counted by the benchmark)."""
    online = [r for r in doc["results"] if r["mode"] == "online" and r["feedback"]
              and bool(r.get("knobs")) == knobs and r.get("timed", "getCollInfo") == "getCollInfo"]
    ucb1 = [r["ns_per_call_median"] for r in online if r["policy"].startswith("ucb1")]
    if not online or not ucb1:
        raise BenchError("plugin_overhead_bench printed no online UCB1 case with feedback")
    per_call = [r["ns_per_call_median"] for r in online]
    slowest = max(online, key=lambda r: r["ns_per_call_median"])["policy"].split(":")[0]
    allocations = max(r.get("allocations_per_call", 0.0) for r in doc["results"])
    where = "512 knob arms" if knobs else "8 slots"
    parts = [("slowest live policy", max(per_call), 100.0 if knobs else 50.0, "max", ns),
             ("heap allocations per call", allocations, 0.0, "max", lambda v: f"{v:g}")]
    return (f"plugin `getCollInfo` per call, {where}, thread CPU (`plugin_overhead_bench"
            f"{' --knobs LISTS' if knobs else ''}`)",
            f"{span(per_call, lambda v: f'{v:.0f}')} ns for every live policy (UCB1 {ucb1[0]:.0f} ns, slowest "
            f"{slowest}); {allocations:g} heap allocations per call", *judged(parts))


def leader_row(doc):
    """Leader mode over 8 slots, every call timed alone back to back (`--leader 2 --pause-us 0`): rank
    0's and the costliest follower's cost per call for every live policy, and their heap allocations per
    call. Goals: the 8-slot row's, on each role."""
    parts, texts = [], []
    for role in ("leader", "follower"):
        rows = [r for r in doc["results"] if r.get("role") == role]
        ucb1 = [r["ns_per_call_median"] for r in rows if r["policy"].startswith("ucb1")]
        if not rows or not ucb1:
            raise BenchError(f"plugin_overhead_bench --leader printed no UCB1 {role} row")
        per_call = [r["ns_per_call_median"] for r in rows]
        allocations = max(r.get("allocations_per_call", 0.0) for r in rows)
        texts.append(f"{role} {span(per_call, lambda v: f'{v:.0f}')} ns (UCB1 {ucb1[0]:.0f} ns), "
                     f"{allocations:g} heap allocations per call")
        parts += [(f"slowest live policy, {role}", max(per_call), 50.0, "max", ns),
                  (f"heap allocations per call, {role}", allocations, 0.0, "max", lambda v: f"{v:g}")]
    return ("plugin `getCollInfo` per call in leader mode, 2 ranks, 8 slots, each call timed alone "
            "(`plugin_overhead_bench --leader 2 --pause-us 0`)", "; ".join(texts), *judged(parts))


def feedback_row(docs):
    leader = [r for doc in docs for r in doc["results"] if r["case"] == "leader" and r["in_flight"] == 0]
    if len(leader) != len(docs):
        raise BenchError("plugin_feedback_delay printed no leader case without calls in flight")
    ranks = "–".join(str(r["ranks"]) for r in (leader[0], leader[-1]))
    return (f"plugin feedback lag, leader mode, {ranks} ranks (`plugin_feedback_delay`)",
            f"median {span([r['median'] for r in leader], str)}, p90 {span([r['p90'] for r in leader], str)} calls",
            *NO_GOAL)


def synth_row(doc, seconds):
    return ("`ncclbot synth --fabric h100-ib-a`",
            f"{doc['contexts']} contexts × {doc['samples']} samples in {seconds * 1e3:.0f} ms (whole process)",
            *NO_GOAL)


def gpu_row(doc, gpu):
    if doc is None:
        return ("GPU replay (`ncclbot bench --backend cuda`)", "not measured: `nvidia-smi -L` lists no GPU here",
                *NO_GOAL)
    rate = steps_per_s(doc, ("ucb1",))
    return (f"GPU replay, 12 arms, {gpu} (`ncclbot bench --backend cuda --arms 12`)",
            f"UCB1 {sci(rate['ucb1'])} steps/s", *NO_GOAL)


def table(machine, rows):
    lines = [machine, "", "| what | result | goal | verdict |", "|---|---|---|---|"]
    lines += [f"| {what} | {result} | {goal} | {verdict} |" for what, result, goal, verdict in rows]
    return "\n".join(lines) + "\n"


def replace_section(text, block, where):
    """The text with what lies between the markers replaced by block; markers must appear once each."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise UsageProblem(f"{where}: needs one line {BEGIN} and, after it, one line {END}")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{block}{END}{tail}"


# --- the machine, and running the benchmarks ---


def first_gpu():
    if shutil.which("nvidia-smi") is None:
        return None
    done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    names = [line.split(":", 1)[1].split("(")[0].strip() for line in done.stdout.splitlines() if ":" in line]
    return names[0] if done.returncode == 0 and names else None


def cpu_text(cpuinfo):
    """The first processor of /proc/cpuinfo as "MODEL (family F model M, SIMD)": a cloud VM's model name
    ("AMD EPYC") can stand for hosts of different generations, whose speeds differ."""
    first = cpuinfo.split("\n\n", 1)[0]
    fields = {}
    for line in first.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    flags = fields.get("flags", "").split()
    simd = next((name for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2")) if flag in flags), "no AVX2")
    return f"{fields['model name']} (family {fields.get('cpu family', '?')} model {fields.get('model', '?')}, {simd})"


def machine_line(gpu, load_before):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = cpu_text(f.read())
        with open("/proc/meminfo") as f:
            kib = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
        memory = f", {kib / 2**20:.0f} GiB"
    except (OSError, StopIteration):
        memory = ""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return (f"Measured {time.strftime('%d %b %Y', time.gmtime())} by `python3 scripts/bench_all.py` at "
            f"{commit.stdout.strip() or 'an unknown commit'}: {cpu}, {os.cpu_count()} cores{memory}, "
            f"GPU: {gpu or 'none'}; load average {load_before:.2f} before the first run; medians.")


def built_programs(build):
    bench_dir = os.path.join(build, "src", "plugin_bench")
    return {"ncclbot": os.path.join(build, "ncclbot"), "plugin": os.path.join(build, "libnccl-tuner-ncclbot.so"),
            "overhead": os.path.join(bench_dir, "plugin_overhead_bench"),
            "delay": os.path.join(bench_dir, "plugin_feedback_delay")}


def measure(build, quick):
    programs = built_programs(build)
    ncclbot, plugin = programs["ncclbot"], programs["plugin"]
    reps = 3 if quick else 11
    rows = []
    for arms in (12, 512):
        bench = [ncclbot, "bench", "--backend", "cpu", "--threads", "1", "--arms", str(arms), "--policy", "ucb1",
                 "--policy", "osub" if arms > 21 else "thompson", "--repetitions", str(reps), "--json"]
        rows.append(replay_row(run_json(bench), arms))
    with tempfile.TemporaryDirectory() as tmp:
        stats_json = os.path.join(tmp, "stats.json")
        run([sys.executable, os.path.join(ROOT, "scripts", "bench_stats.py"), "--ncclbot", ncclbot, "--threads", "1",
             "--repeat", "1" if quick else "3", "--json", stats_json])
        with open(stats_json) as f:
            rows.append(stats_row(json.load(f)))
        rows.append(plugin_row(run_json([programs["overhead"], plugin,
                                         "200000" if quick else "1000000", str(reps)])))
        rows.append(plugin_row(run_json([programs["overhead"], plugin, "20000" if quick else "200000",
                                         "3" if quick else "5", "--knobs", PLUGIN_KNOBS]), knobs=True))
        rows.append(leader_row(run_json([programs["overhead"], plugin, "5000", "3" if quick else "5",
                                         "--leader", "2", "--pause-us", "0"])))
        rows.append(feedback_row([run_json([programs["delay"], plugin, "4096",
                                            str(r)]) for r in FEEDBACK_RANKS]))
        synth = [ncclbot, "synth", "--fabric", "h100-ib-a", "--out", os.path.join(tmp, "sweep.csv"), "--json"]
        walls = []
        for _ in range(reps):
            t0 = time.perf_counter()
            doc = run_json(synth)
            walls.append(time.perf_counter() - t0)
        rows.append(synth_row(doc, statistics.median(walls)))
    gpu = first_gpu()
    cuda = None
    if gpu:
        cuda = run_json([ncclbot, "bench", "--backend", "cuda", "--arms", "12", "--policy", "ucb1", "--json"])
    rows.append(gpu_row(cuda, gpu))
    return gpu, rows


def check_output_file(path):
    """A --json target must be a regular file this script can create or replace; said before any run.
    Root passes every permission check, so the folder is tried with a file of the script's own."""
    if os.path.isdir(path):
        raise UsageProblem(f"--json {path}: is a folder, not a file")
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageProblem(f"--json {path}: is not a regular file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageProblem(f"--json {path}: the folder {folder} does not exist")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise UsageProblem(f"--json {path}: not writable")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".bench_all-"):
            pass
    except OSError as e:
        raise UsageProblem(f"--json {path}: cannot write in {folder} ({e.strerror})") from None


def write_replacing(path, text):
    """Writes text to path through a file beside it, so a failed write leaves the old file whole."""
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def readme_path():
    return os.path.join(ROOT, "README.md")


def check_arguments(args):
    """Every usage problem is found before the first benchmark runs (a run takes minutes)."""
    for path in built_programs(args.build).values():
        if not os.path.exists(path):
            raise UsageProblem(f"{path}: not built (scripts/build.sh builds it)")
    if args.json:
        check_output_file(args.json)
    if args.update_readme:
        try:
            with open(readme_path(), encoding="utf-8") as f:
                replace_section(f.read(), "", readme_path())
        except (OSError, UnicodeDecodeError) as e:
            raise UsageProblem(f"{readme_path()}: cannot be read as UTF-8 text ({getattr(e, 'strerror', None) or e})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build folder (default: build)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions: a smoke run")
    ap.add_argument("--json", help="also write the machine line and the rows as JSON here")
    ap.add_argument("--update-readme", action="store_true", help="write the table into README.md")
    args = ap.parse_args()
    try:
        check_arguments(args)
        load_before = os.getloadavg()[0]
        gpu, rows = measure(args.build, args.quick)
        machine = machine_line(gpu, load_before)
        block = table(machine, rows)
        print(block, end="")
        if args.json:
            doc = {"machine": machine,
                   "rows": [{"what": w, "result": r, "goal": g, "verdict": v} for w, r, g, v in rows]}
            write_replacing(args.json, json.dumps(doc, indent=1))
        if args.update_readme:
            readme = readme_path()
            with open(readme, encoding="utf-8") as f:
                write_replacing(readme, replace_section(f.read(), block, readme))
    except BenchError as e:
        print(f"bench_all: {e}", file=sys.stderr)
        return 2 if isinstance(e, UsageProblem) else 1
    except OSError as e:  # writing --json or the README failed after the checks
        print(f"bench_all: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
