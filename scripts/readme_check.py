#!/usr/bin/env python3
"""Runs every command block of README.md, so the README cannot drift from the program.

Every code block of README.md is fenced, and its info string says what it is:
  ```sh                 commands: run with bash -euo pipefail in the repository root, with the
                        build folder first on PATH (so `ncclbot` is the one just built); must exit 0
  ```console            `$ command` lines, each followed by what it prints (stdout and stderr as a
                        terminal shows them); a line `...` stands for any number of lines
  ```text               not commands (a folder layout, a file format)
  ```sh no-run: WHY     commands that cannot run here; WHY is printed with the summary
  ```sh needs-shared-logs   commands that read the third-party nccl-tests logs: run as `sh` when
                        $NCCLBOT_SHARED_DIR/data/nccl-tests exists (default: the folder `shared`
                        beside the clone), else listed as not run, with where they were looked for
A command outside a fenced block, an unknown info string or an unclosed fence is a failure, and
so is any file a block leaves outside the ignored folders (`git status` must not change).

Usage: python3 scripts/readme_check.py [--build DIR] [--readme FILE] [--only SUBSTRING]
Ends with the line "readme: N passed, M failed" (M > 0: exit 1; bad usage: exit 2).
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Lines that look like a command a reader would copy, if they stood in an indented block.
COMMAND_LIKE = re.compile(r"^ {4,}(\$ |ncclbot |scripts/|python3 |export |echo |cmake |mpirun )")
BLOCK_TIMEOUT_S = 600


class Block:
    def __init__(self, line, info, body):
        self.line, self.info, self.body = line, info, body

    def kind(self):
        return self.info.split()[0] if self.info else ""


def parse(path):
    """The fenced blocks of a Markdown file, and the problems found while reading it."""
    blocks, problems = [], []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            info, start, body = line[3:].strip(), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            if i == len(lines):
                problems.append(f"{path}:{start}: unclosed code fence")
            blocks.append(Block(start, info, body))
        elif COMMAND_LIKE.match(line):
            problems.append(f"{path}:{i + 1}: a command outside a fenced block: {line.strip()}")
        i += 1
    return blocks, problems


def environment(build):
    env = dict(os.environ)
    env["PATH"] = os.path.abspath(build) + os.pathsep + env.get("PATH", "")
    env.pop("NCCLBOT_DATA_DIR", None)  # the README describes the built-in presets
    return env


def run(script, env):
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=BLOCK_TIMEOUT_S, stdin=subprocess.DEVNULL)


def matches(expected, actual):
    """Whether the printed lines match the expected ones, `...` standing for any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def console_commands(block):
    """(command, expected output lines) pairs of a console block."""
    pairs = []
    for line in block.body:
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        elif pairs:
            pairs[-1][1].append(line.rstrip())
        elif line.strip():
            raise ValueError("output before the first `$ ` command")
    return pairs


def check_console(path, block, env):
    try:
        pairs = console_commands(block)
    except ValueError as e:
        return [f"{path}:{block.line}: {e}"]
    failures = []
    for command, expected in pairs:
        done = run(command, env)
        printed = [l.rstrip() for l in done.stdout.rstrip("\n").split("\n")] if done.stdout else []
        if done.returncode != 0:
            failures.append(f"{path}:{block.line}: `{command}` exited {done.returncode}:\n{done.stdout}")
        elif not matches(expected, printed):
            failures.append(f"{path}:{block.line}: `{command}` printed\n" + "\n".join(printed) +
                            "\nbut the README shows\n" + "\n".join(expected))
    return failures


def git_status():
    try:
        return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None  # not a git checkout: nothing to compare


def shared_logs_dir():
    """Where the third-party nccl-tests logs are (the same rule as scripts/main.sh's)."""
    shared = os.environ.get("NCCLBOT_SHARED_DIR") or os.path.join(ROOT, "..", "shared")
    return os.path.normpath(os.path.join(shared, "data", "nccl-tests"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build folder with ncclbot")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--only", default="", help="run only blocks whose text contains this")
    args = ap.parse_args()
    if not os.access(os.path.join(args.build, "ncclbot"), os.X_OK):
        print(f"readme_check: no ncclbot in {args.build} (build first)", file=sys.stderr)
        return 2
    path = os.path.relpath(args.readme, ROOT)
    blocks, failures = parse(args.readme)
    env = environment(args.build)
    before = git_status()
    passed, not_run = 0, []
    for block in blocks:
        kind, text = block.kind(), "\n".join(block.body)
        if args.only and args.only not in text:
            continue
        if kind == "text":
            continue
        if kind == "sh" and block.info.startswith("sh no-run:"):
            not_run.append(f"{path}:{block.line}: {block.info[len('sh no-run:'):].strip()}")
            continue
        if block.info == "sh needs-shared-logs":
            logs = shared_logs_dir()
            if not os.path.isdir(logs):
                not_run.append(f"{path}:{block.line}: no third-party nccl-tests logs in {logs} "
                               "(set NCCLBOT_SHARED_DIR)")
                continue
        elif block.info not in ("sh", "console"):
            failures.append(f"{path}:{block.line}: unknown code block '{block.info}' "
                            "(sh, console, text, 'sh no-run: WHY' or 'sh needs-shared-logs')")
            continue
        print(f"readme_check: {path}:{block.line} ({kind}, {len(block.body)} lines)", flush=True)
        try:
            if kind == "console":
                errors = check_console(path, block, env)
            else:
                done = run(text, env)
                errors = [] if done.returncode == 0 else [
                    f"{path}:{block.line}: the block exited {done.returncode}:\n{done.stdout}"]
        except subprocess.TimeoutExpired:
            errors = [f"{path}:{block.line}: still running after {BLOCK_TIMEOUT_S} s"]
        failures += errors
        passed += not errors
    after = git_status()
    if before is not None and after != before:
        failures.append("the blocks left files outside the ignored folders (git status):\n" + after)
    for line in not_run:
        print(f"readme_check: not run: {line}")
    for f in failures:
        print(f"readme_check: FAILED: {f}")
    print(f"readme: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
