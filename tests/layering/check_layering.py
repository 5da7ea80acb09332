#!/usr/bin/env python3
"""The include graph's layers (docs/architecture.md "Layers"): every folder of src/, include/ncclbot/
and kernels/ has a place in one order, and a file may include only its own folder and folders
earlier in the order, so no cycle can form and a new back-edge fails the check:

  core, base, policy, model, bench, io, stats, replay, kernels, hipipe, sim, log, ope, scale,
  campaign, study, report, run, mpi, plugin, plugin_bench, plugin_check, cli

(`ncclbot/version.hpp` may be included by anyone.) Besides, nothing in src/, include/ or kernels/
includes a test header (tests/, support/), a public header (include/ncclbot/) includes only
public headers, and no two headers share a file name. A folder the order does not name is itself a violation, so a new module needs a
place before it can land.

Usage: python3 tests/layering/check_layering.py [ROOT]; prints each violation as FILE:LINE and
exits 1 when there is one. --self-test checks that it catches what it exists for.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ORDER = ["core", "base", "policy", "model", "bench", "io", "stats", "replay", "kernels", "hipipe", "sim",
         "log", "ope", "scale", "campaign", "study", "report", "run", "mpi", "plugin", "plugin_bench", "plugin_check",
         "cli"]
RANK = {name: i for i, name in enumerate(ORDER)}
TREES = ("include/ncclbot", "src", "kernels")


def folder_of_file(rel):
    parts = rel.split("/")
    if parts[0] == "kernels":
        return "kernels"
    if parts[0] == "include":
        return parts[2] if len(parts) > 3 else None  # include/ncclbot/version.hpp: no folder
    return parts[1] if len(parts) > 2 else None


def folder_of_include(text, src_folders):
    """The layer an include names, "tests" for a test header, None for one outside ncclbot."""
    parts = text.split("/")
    if parts[0] in ("tests", "support") or ".." in parts:
        return "tests"
    if parts[0] == "ncclbot":
        return parts[1] if len(parts) > 2 else None  # ncclbot/version.hpp
    if len(parts) > 1 and (parts[0] in RANK or parts[0] in src_folders):
        return parts[0]
    return None


def violations(root):
    src = os.path.join(root, "src")
    src_folders = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))} if os.path.isdir(src) else set()
    out = []
    for base in TREES:
        for folder, _, files in os.walk(os.path.join(root, base)):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".h", ".cu", ".cuh")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                own = folder_of_file(rel)
                if own is not None and own not in RANK:
                    out.append(f"{rel}:1: folder '{own}' has no place in the layer order (check_layering.py ORDER)")
                    continue
                public = rel.startswith("include/")
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = folder_of_include(m.group(1), src_folders)
                    if (target not in (None, "tests") and not m.group(1).startswith("ncclbot/") and
                            not os.path.exists(os.path.join(root, "src", m.group(1))) and
                            os.path.exists(os.path.join(root, "tests", m.group(1)))):
                        target = "tests"  # found only on the tests' include path
                    where = f"{rel}:{number}: includes {m.group(1)}"
                    if target == "tests":
                        out.append(f"{where} (a test header)")
                    elif public and target is not None and not m.group(1).startswith("ncclbot/"):
                        out.append(f"{where} (a private header from a public one)")
                    elif target is not None and target not in RANK:
                        out.append(f"{where} (folder '{target}' has no place in the layer order)")
                    elif target is not None and own is not None and RANK[target] > RANK[own]:
                        out.append(f"{where} ({target} is above {own})")
    return out + same_named_headers(root)


def same_named_headers(root):
    """Headers of different folders that share a file name: an include then says less than it seems."""
    seen, out = {}, []
    for base in TREES:
        for folder, _, files in sorted(os.walk(os.path.join(root, base))):
            for name in sorted(files):
                if name.endswith((".hpp", ".h", ".cuh")):
                    rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                    if name in seen:
                        out.append(f"{rel}:1: has the file name of {seen[name]} (name one of them for what it holds)")
                    else:
                        seen[name] = rel
    return out


def self_test():
    """The check must catch a back-edge, a test header, a private header in a public one, a folder
    without a place and two headers of one name, and pass what is allowed."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        files = {"src/study/a.cpp": '#include "report/b.hpp"\n#include "study/c.hpp"\n#include "base/x.hpp"\n',
                 "src/core/d.cpp": '#include "ncclbot/io/e.hpp"\n',
                 "src/stats/g.cpp": '#include "ncclbot/replay/h.hpp"\n#include "ncclbot/core/i.hpp"\n',
                 "src/plugin/j.cpp": '#include "plugin/k.hpp"\n#include "support/l.hpp"\n#include "plugin/q.hpp"\n',
                 "src/plugin/k.hpp": "",
                 "tests/plugin/q.hpp": "",
                 "include/ncclbot/io/m.hpp": '#include "study/n.hpp"\n#include "ncclbot/version.hpp"\n',
                 "src/newmodule/o.cpp": '#include "ncclbot/core/p.hpp"\n',
                 "src/run/f.cpp": '#include "report/b.hpp"\n#include "study/c.hpp"\n',
                 "src/run/r.hpp": "", "src/report/r.hpp": ""}
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").write(text)
        found = violations(root)
    want = ["include/ncclbot/io/m.hpp:1:", "src/core/d.cpp:1:", "src/newmodule/o.cpp:1:", "src/plugin/j.cpp:2:",
            "src/plugin/j.cpp:3:", "src/run/r.hpp:1:", "src/stats/g.cpp:1:", "src/study/a.cpp:1:"]
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
