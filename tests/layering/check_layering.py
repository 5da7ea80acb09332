#!/usr/bin/env python3
"""The include graph's layers (docs/install.md "Layers"): a folder may include only the folders
below it, so no cycle can form. Checked on every #include "..." of src/ and include/ncclbot/.

  core            <- nothing of ncclbot but core
  io, model, ...  <- core (io: readers and writers; the public library parts)
  study           <- the library parts, never report/, run/ or cli/
  report          <- study and the library parts, never run/ or cli/
  run             <- study and report (`ncclbot run`)
  cli, plugin, mpi <- anything

Usage: python3 tests/layering/check_layering.py [ROOT]; prints each violation as FILE:LINE and
exits 1 when there is one.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# For each layer, the include prefixes it must not use.
FORBIDDEN = {
    "include/ncclbot/core/": ["ncclbot/io/", "ncclbot/replay/", "ncclbot/stats/", "ncclbot/sim/",
                              "ncclbot/scale/", "ncclbot/campaign/", "ncclbot/hipipe/", "ncclbot/bench/",
                              "study/", "report/", "run/", "cli/", "plugin/"],
    "src/core/": ["ncclbot/io/", "ncclbot/replay/", "ncclbot/stats/", "ncclbot/sim/", "ncclbot/scale/",
                  "study/", "report/", "run/", "cli/", "plugin/"],
    "include/ncclbot/": ["study/", "report/", "run/", "cli/", "plugin/"],
    "src/study/": ["report/", "run/", "cli/", "plugin/"],
    "src/report/": ["run/", "cli/", "plugin/"],
    "src/run/": ["cli/", "plugin/"],
}


def violations(root):
    out = []
    for base in ("include/ncclbot", "src"):
        for folder, _, files in os.walk(os.path.join(root, base)):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".h", ".cu")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                rules = [bad for layer, bad in FORBIDDEN.items() if rel.startswith(layer)]
                if not rules:
                    continue
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    for bad in sum(rules, []):
                        if m.group(1).startswith(bad):
                            out.append(f"{rel}:{number}: includes {m.group(1)} ({bad} is above this layer)")
    return out


def self_test():
    """The check must catch what it exists for: study including report, core including io."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        files = {"src/study/a.cpp": '#include "report/b.hpp"\n#include "study/c.hpp"\n',
                 "src/core/d.cpp": '#include "ncclbot/io/e.hpp"\n',
                 "src/run/f.cpp": '#include "report/b.hpp"\n#include "study/c.hpp"\n'}
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").write(text)
        found = violations(root)
    want = ["src/core/d.cpp:1:", "src/study/a.cpp:1:"]
    ok = sorted(v.split(" ")[0] for v in found) == want
    print("layering self-test:", "ok" if ok else f"expected {want}, found {found}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    found = violations(root)
    for v in found:
        print(v)
    print(f"layering: {len(found)} violations")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
