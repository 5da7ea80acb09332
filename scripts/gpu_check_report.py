#!/usr/bin/env python3
"""The record of one GPU check (scripts/gpu-check.sh): OUT/summary.json, rewritten whole (write and
rename) after every step, so a run cut short leaves a readable record of what it did; the gpu tests'
reports merged and judged into OUT/tests.json; and the table printed at the end.

Subcommands (SUMMARY is the summary.json path):
  init SUMMARY --bundle DIR --budget S --stages 1,2,3,4 [--dry]
  stage SUMMARY N STATUS                      a stage's status: running, passed, failed, ...
  step SUMMARY N NAME RC SECONDS [--data FILE] [--set KEY=VALUE ...]
                                              one step's exit code and time (and its JSON output)
  device SUMMARY --probe FILE --probe-rc RC --probe-err FILE [--smi FILE] [--glibc TEXT]
                                              exit 0: a usable device, 3: none, 1: the probe failed
  tests SUMMARY REPORTS_DIR MERGED --programs "A B" --runner-rc RC --device-usable 0|1
                                              exit 0: passed, 1: failed, 3: skipped for want of a device
  same-results A.json B.json                  exit 0 when two results.json differ only in the backend
  ncu-per-step CSV STEPS                      instructions per step from Nsight Compute's CSV
  annotate SUMMARY NAME KEY=VALUE...          fields added to a recorded step
  set SUMMARY KEY VALUE                       a top-level field (the horizon, the study's name)
  finish SUMMARY EXIT SECONDS                 the verdict; then prints the table
Bad input: one line on stderr, exit 2.
"""
import csv
import json
import os
import sys
import time

# Skips that do not fail the check on the GPU machine: the MPI test's needs (the machine has no MPI).
ALLOWED_SKIPS = {"no_mpirun": "no mpirun", "no_ncclbot_mpi": "no ncclbot-mpi"}
STAGE_TITLES = {
    "1": "device and gpu tests",
    "2": "benchmarks",
    "3": "compute-sanitizer, ncu",
    "4": "JAX / CuPy peers",
}


class BadInput(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"cannot read {path}: {e}")


def save(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def number(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def options(args, names):
    """--name value pairs (and flags given as names ending in '!') from args; the rest positionally."""
    found, rest, i = {}, [], 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            key = a[2:]
            if key + "!" in names:
                found[key] = True
                i += 1
                continue
            if key not in names:
                raise BadInput(f"unknown option {a}")
            if i + 1 >= len(args):
                raise BadInput(f"{a} needs a value")
            if key == "set":
                found.setdefault("set", []).append(args[i + 1])
            else:
                found[key] = args[i + 1]
            i += 2
        else:
            rest.append(a)
            i += 1
    return found, rest


def stage_of(doc, n):
    return doc["stages"].setdefault(str(n), {"title": STAGE_TITLES.get(str(n), ""), "status": "not run", "steps": []})


def cmd_init(args):
    opt, rest = options(args, {"bundle", "budget", "stages", "dry!"})
    if len(rest) != 1:
        raise BadInput("init needs SUMMARY")
    doc = {
        "tool": "scripts/gpu-check.sh",
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "bundle": opt.get("bundle", ""),
        "budget_s": number(opt.get("budget", "0")),
        "stages_requested": opt.get("stages", ""),
        "dry": bool(opt.get("dry")),
        "device": {"usable": None},
        "stages": {},
    }
    for n in STAGE_TITLES:
        stage_of(doc, n)
    save(rest[0], doc)


def cmd_stage(args):
    if len(args) != 3:
        raise BadInput("stage needs SUMMARY N STATUS")
    doc = load(args[0])
    stage_of(doc, args[1])["status"] = args[2]
    save(args[0], doc)


def step_status(rc):
    if rc == 0:
        return "ok"
    if rc in (124, 137):
        return "timed out"
    if rc == 125:
        return "not run: no time left"
    return f"failed (exit {rc})"


def read_data(path):
    """A step's output: its JSON document, else the last 4,000 characters of its text."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text[-4000:] if text else None


def cmd_step(args):
    opt, rest = options(args, {"data", "set"})
    if len(rest) != 5:
        raise BadInput("step needs SUMMARY N NAME RC SECONDS")
    path, n, name, rc, seconds = rest
    doc = load(path)
    rc = int(number(rc)) if isinstance(number(rc), int) else 1
    entry = {"name": name, "status": step_status(rc), "rc": rc, "seconds": number(seconds)}
    if "data" in opt:
        entry["data"] = read_data(opt["data"])
    for kv in opt.get("set", []):
        key, _, value = kv.partition("=")
        entry[key] = number(value)
    steps = stage_of(doc, n)["steps"]
    steps[:] = [s for s in steps if s["name"] != name] + [entry]
    save(path, doc)


def smi_fields(path):
    """nvidia-smi --format=csv,noheader,nounits: the first GPU's line, split."""
    try:
        line = next((l for l in open(path) if l.strip()), "")
    except OSError:
        return []
    return [f.strip() for f in line.split(",")]


def cmd_device(args):
    opt, rest = options(args, {"probe", "probe-rc", "probe-err", "smi", "glibc"})
    if len(rest) != 1 or "probe" not in opt or "probe-rc" not in opt:
        raise BadInput("device needs SUMMARY --probe FILE --probe-rc RC")
    doc = load(rest[0])
    dev = {"usable": False}
    rc = int(opt["probe-rc"])
    err = ""
    if "probe-err" in opt and os.path.exists(opt["probe-err"]):
        lines = [l.strip() for l in open(opt["probe-err"]) if l.strip()]
        err = lines[-1] if lines else ""
    exit_code = 0
    if rc == 0:
        probe = read_data(opt["probe"])
        d = probe.get("device", {}) if isinstance(probe, dict) else {}
        dev.update(usable=True, name=d.get("name"), multiprocessors=d.get("multiprocessors"),
                   compute_capability=d.get("compute_capability"))
    elif "no usable CUDA device" in err:
        dev["reason"] = err
        exit_code = 3
    else:
        dev["reason"] = f"the probe run failed (exit {rc}): {err}"
        exit_code = 1
    fields = smi_fields(opt["smi"]) if "smi" in opt else []
    keys = ["smi_name", "driver", "memory_mib", "max_sm_clock_mhz", "smi_compute_capability"]
    for k, v in zip(keys, fields):
        dev[k] = number(v)
    if opt.get("glibc"):
        dev["glibc"] = opt["glibc"]
    doc["device"] = dev
    save(rest[0], doc)
    print(device_line(dev))
    return exit_code


def device_line(dev):
    if not dev.get("usable"):
        return f"device: NONE usable ({dev.get('reason', 'not probed')})"
    cc = dev.get("compute_capability") or 0
    parts = [f"{dev.get('name')}", f"{dev.get('multiprocessors')} SMs", f"compute {cc // 10}.{cc % 10}"]
    if dev.get("max_sm_clock_mhz"):
        parts.append(f"max SM clock {dev['max_sm_clock_mhz']} MHz")
    if dev.get("driver"):
        parts.append(f"driver {dev['driver']}")
    if dev.get("memory_mib"):
        parts.append(f"{dev['memory_mib']} MiB")
    if dev.get("glibc"):
        parts.append(dev["glibc"])
    return "device: " + ", ".join(parts)


def judge_tests(reports, programs, runner_rc, device_usable):
    """Counts and verdict of the gpu tests' JSON reports: (summary dict, exit code)."""
    counts = {"tests": 0, "passed": 0, "failed": 0, "skipped_no_device": 0, "skipped_allowed": 0,
              "skipped_unexplained": 0}
    problems, failed_tests, allowed = [], [], set()
    for program in programs:
        report = reports.get(program)
        if not isinstance(report, dict):
            problems.append(f"{program}: no report (it crashed, ran out of time or did not run)")
            continue
        for suite in report.get("testsuites", []):
            for t in suite.get("testsuite", []):
                name = f"{suite.get('name')}.{t.get('name')}"
                counts["tests"] += 1
                if t.get("failures"):
                    counts["failed"] += 1
                    failed_tests.append(name)
                elif t.get("result") == "SKIPPED":
                    kind = t.get("skip_kind", "")
                    if kind == "no_device":
                        counts["skipped_no_device"] += 1
                    elif kind in ALLOWED_SKIPS:
                        counts["skipped_allowed"] += 1
                        allowed.add(ALLOWED_SKIPS[kind])
                    else:
                        counts["skipped_unexplained"] += 1
                        problems.append(f"{name} skipped without a known reason")
                else:
                    counts["passed"] += 1
    if counts["tests"] == 0:
        problems.append("no test was found in any report")
    if failed_tests:
        problems.append("failed: " + ", ".join(failed_tests))
    if runner_rc != 0 and not problems:
        problems.append(f"run-gpu-tests.sh exited {runner_rc}")
    if device_usable and counts["skipped_no_device"]:
        problems.append(f"{counts['skipped_no_device']} tests skipped for want of a device the probe found")
    counts["allowed_skip_reasons"] = sorted(allowed)
    if problems:
        verdict, code = "failed", 1
    elif not device_usable:
        verdict, code = "no device", 3
    else:
        verdict, code = "passed", 0
    counts["verdict"] = verdict
    counts["problems"] = problems
    return counts, code


def tests_line(c):
    parts = [f"{c['tests']} tests: {c['passed']} passed"]
    if c["failed"]:
        parts.append(f"{c['failed']} FAILED")
    if c["skipped_allowed"]:
        parts.append(f"{c['skipped_allowed']} skipped ({', '.join(c['allowed_skip_reasons'])}: allowed)")
    if c["skipped_no_device"]:
        parts.append(f"{c['skipped_no_device']} skipped (no device)")
    if c["skipped_unexplained"]:
        parts.append(f"{c['skipped_unexplained']} skipped WITHOUT A KNOWN REASON")
    return ", ".join(parts)


def cmd_tests(args):
    opt, rest = options(args, {"programs", "runner-rc", "device-usable"})
    if len(rest) != 3 or "programs" not in opt:
        raise BadInput("tests needs SUMMARY REPORTS_DIR MERGED --programs 'A B'")
    path, reports_dir, merged = rest
    programs = opt["programs"].split()
    reports = {}
    for p in programs:
        f = os.path.join(reports_dir, p + ".json")
        reports[p] = read_data(f) if os.path.exists(f) else None
    counts, code = judge_tests(reports, programs, int(opt.get("runner-rc", "0")), opt.get("device-usable") == "1")
    save(merged, {"summary": counts, "reports": reports})
    doc = load(path)
    doc["tests"] = counts
    save(path, doc)
    print(f"gpu tests {counts['verdict']}: {tests_line(counts)}")
    for p in counts["problems"]:
        print(f"  {p}")
    return code


def strip_backend(doc):
    for key in ("backend", "backend_requested"):
        doc.get("study", {}).pop(key, None)
    return doc


def cmd_same_results(args):
    if len(args) != 2:
        raise BadInput("same-results needs A.json B.json")
    a, b = (strip_backend(load(p)) for p in args)
    same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    print("identical" if same else "DIFFERENT")
    return 0 if same else 1


def cmd_ncu_per_step(args):
    if len(args) != 2:
        raise BadInput("ncu-per-step needs CSV STEPS")
    try:
        rows = [r for r in csv.reader(open(args[0])) if r and "smsp__inst_executed.sum" in r]
        print(f"{float(rows[-1][-1].replace(',', '')) * 32 / float(args[1]):.0f}")
    except (OSError, IndexError, ValueError):
        return 1
    return 0


# --- the table --------------------------------------------------------------------------------
def steps_by_name(doc):
    return {s["name"]: s for st in doc["stages"].values() for s in st["steps"]}


def rate_of(step):
    try:
        return step["data"]["results"][0]["steps_per_s"]
    except (KeyError, IndexError, TypeError):
        return None


def fmt(x, spec=".3g"):
    return "-" if x is None else format(x, spec)


def table(doc):
    lines = []
    steps = steps_by_name(doc)
    dev = doc.get("device", {})
    lines.append(device_line(dev))
    for n in sorted(doc["stages"]):
        st = doc["stages"][n]
        secs = sum(s.get("seconds") or 0 for s in st["steps"] if isinstance(s.get("seconds"), (int, float)))
        extra = tests_line(doc["tests"]) if n == "1" and "tests" in doc else ""
        lines.append(f"stage {n}  {st['title']:<24} {st['status']:<36} {secs:>4} s  {extra}".rstrip())
        for s in st["steps"]:
            if s["status"] != "ok":
                lines.append(f"         {s['name']}: {s['status']}")
    bench = [k for k in steps if k.startswith("bench gpu ")]
    if bench:
        sms = dev.get("multiprocessors") or 132
        mhz = dev.get("max_sm_clock_mhz") or 1980
        per_step = (steps.get("ncu") or {}).get("instructions_per_step")
        source = "measured by ncu" if per_step else "static SASS estimate, docs/cuda.md"
        per_step = per_step or 570
        limit = sms * 4 * mhz * 1e6 * 32 / per_step
        lines.append(f"UCB1, 12 arms, 480 contexts, horizon {doc.get('horizon', 4096)}; issue limit {limit:.3g} steps/s "
                     f"({sms} SMs x 4 x {mhz} MHz x 32 / {per_step:.0f} instructions per step, {source})")
        if doc.get("dry"):
            lines.append("(dry run: the GPU column is the CPU on one thread, at tiny sizes)")
        lines.append(f"{'seeds':>6} {'CPU steps/s':>13} {'GPU steps/s':>13} {'GPU/CPU':>8} {'of limit':>9}")
        for name in sorted(bench, key=lambda k: int(k.split()[2])):
            seeds = name.split()[2]
            cpu, gpu = rate_of(steps.get(f"bench cpu {seeds} seeds")), rate_of(steps[name])
            ratio = gpu / cpu if cpu and gpu else None
            lines.append(f"{seeds:>6} {fmt(cpu):>13} {fmt(gpu):>13} {fmt(ratio, '.1f'):>8} "
                         f"{fmt(gpu / limit if gpu else None, '.1%'):>9}")
    blocks = steps.get("blocks")
    if blocks and isinstance(blocks.get("data"), dict):
        by_policy = {}
        for r in blocks["data"].get("results", []):
            by_policy.setdefault(r["policy"].split(":")[0], []).append(f"{r['block_requested']}: {r['steps_per_s']:.3g}")
        lines.append("steps/s by block (128 seeds): " + "; ".join(f"{p} {', '.join(v)}" for p, v in by_policy.items()))
    knobs = {b: steps.get(f"knobs {b}") for b in ("cpu", "cuda")}
    if any(knobs.values()):
        rates = {b: {r["policy"].split(":")[0]: r["steps_per_s"] for r in (s or {}).get("data", {}).get("results", [])}
                 if s and isinstance(s.get("data"), dict) else {} for b, s in knobs.items()}
        cells = []
        for p in ("ucb1", "osub"):
            cpu, gpu = rates["cpu"].get(p), rates["cuda"].get(p)
            ratio = f", GPU/CPU {gpu / cpu:.1f}" if cpu and gpu else ""
            cells.append(f"{p} CPU {fmt(cpu)}, GPU {fmt(gpu)}{ratio}")
        lines.append("512 knob arms, 480 contexts, 128 seeds, horizon 1024 (steps/s): " + "; ".join(cells))
    if "block 1024" in steps:
        lines.append(f"block 1024 asked, cut to each kernel's limit (random and UCB1, delay 5): {steps['block 1024']['status']}")
    if "study gpu" in steps or "study cpu" in steps:
        cpu, gpu, same = steps.get("study cpu", {}), steps.get("study gpu", {}), steps.get("study results identical", {})
        verdict = {0: "identical", 1: "DIFFERENT"}.get(same.get("rc"), "not compared")
        lines.append(f"study {doc.get('study', 'quick.toml')}: CPU {cpu.get('seconds', '-')} s ({cpu.get('status', 'not run')}), "
                     f"GPU {gpu.get('seconds', '-')} s ({gpu.get('status', 'not run')}); results.json {verdict}")
    for tool in ("memcheck", "racecheck"):
        if tool in steps:
            lines.append(f"compute-sanitizer {tool}: {'clean' if steps[tool]['status'] == 'ok' else steps[tool]['status']}")
    if "ncu" in steps:
        n = steps["ncu"].get("instructions_per_step")
        lines.append(f"ncu (--clock-control none): {f'{n:.0f} instructions per UCB1 step' if n else steps['ncu']['status']}")
    peers = steps.get("peers")
    if peers and isinstance(peers.get("data"), dict):
        rows = peers["data"].get("results", [])
        lines.append("peers (steps/s, ncclbot's over the peer's): " + "; ".join(
            f"{r['peer']} {r['steps_per_s']:.3g}" + (f" ({r['ncclbot_cuda_over_peer']:.1f}x)"
                                                      if r.get("ncclbot_cuda_over_peer") and r["peer"] != "ncclbot cuda" else "")
            for r in rows) if rows else "peers: none ran")
        if not any(r["peer"] != "ncclbot cuda" for r in rows):
            lines.append("peers: neither JAX nor CuPy ran (stage4.log says why)")
    fin = doc.get("finished")
    if fin:
        lines.append(f"gpu-check: {fin['verdict']} in {fin['seconds']} s (exit {fin['exit_code']})")
    return "\n".join(lines)


def cmd_finish(args):
    if len(args) != 3:
        raise BadInput("finish needs SUMMARY EXIT SECONDS")
    doc = load(args[0])
    code = int(args[1])
    verdict = {0: "PASSED", 1: "FAILED", 3: "NO USABLE CUDA DEVICE: nothing was measured"}.get(code, f"exit {code}")
    doc["finished"] = {"exit_code": code, "seconds": number(args[2]), "verdict": verdict}
    save(args[0], doc)
    text = table(doc)
    with open(os.path.join(os.path.dirname(os.path.abspath(args[0])), "summary.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


def cmd_annotate(args):
    """annotate SUMMARY NAME KEY=VALUE...: fields added to a recorded step (ncu's count)."""
    if len(args) < 3:
        raise BadInput("annotate needs SUMMARY NAME KEY=VALUE")
    doc = load(args[0])
    step = steps_by_name(doc).get(args[1])
    if step is None:
        raise BadInput(f"no step named {args[1]}")
    for kv in args[2:]:
        key, _, value = kv.partition("=")
        step[key] = number(value)
    save(args[0], doc)


def cmd_set(args):
    """set SUMMARY KEY VALUE: a top-level field (the workload's horizon, the study's name)."""
    if len(args) != 3:
        raise BadInput("set needs SUMMARY KEY VALUE")
    doc = load(args[0])
    doc[args[1]] = number(args[2])
    save(args[0], doc)


COMMANDS = {"init": cmd_init, "stage": cmd_stage, "step": cmd_step, "device": cmd_device, "tests": cmd_tests,
            "same-results": cmd_same_results, "ncu-per-step": cmd_ncu_per_step, "finish": cmd_finish,
            "set": cmd_set, "annotate": cmd_annotate}


def main(argv):
    if len(argv) < 1 or argv[0] not in COMMANDS:
        print(f"gpu_check_report: expected one of {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:]) or 0
    except BadInput as e:
        print(f"gpu_check_report: {argv[0]}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
