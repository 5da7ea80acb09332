#!/usr/bin/env python3
"""The plugin's ABI versions are stated in one place, docs/plugin.md's table "Which NCCL binds
what", and that table names exactly the tuner and profiler versions the built plugin exports.

Usage: python3 tests/scripts/plugin_abi_docs_test.py PLUGIN.so   (exit 0 when they agree)
"""
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGIN = None


def exported_versions(plugin):
    """{"tuner": {2, ...}, "profiler": {...}} from the plugin's dynamic symbol table."""
    out = subprocess.run(["nm", "-D", "--defined-only", plugin], capture_output=True, text=True, check=True).stdout
    found = {"tuner": set(), "profiler": set()}
    for kind, symbol in (("tuner", "ncclTunerPlugin_v"), ("profiler", "ncclProfiler_v")):
        found[kind] = {int(v) for v in re.findall(rf"\b{symbol}(\d+)\b", out)}
    return found


def documented_versions(text):
    """The versions the table's tuner and profiler columns name (its rows: NCCL, tuner, profiler, ...)."""
    section = text.split("### Which NCCL binds what", 1)[1].split("\n#", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| 2.")]
    if not rows:
        raise AssertionError("docs/plugin.md: no rows under 'Which NCCL binds what'")
    found = {"tuner": set(), "profiler": set()}
    for cells in rows:
        for kind, cell in (("tuner", cells[1]), ("profiler", cells[2])):
            if "not exported" not in cell:
                found[kind] |= {int(v) for v in re.findall(r"\bv(\d+)\b", cell)}
    return found


class AbiDocs(unittest.TestCase):
    def test_the_table_names_what_the_plugin_exports(self):
        with open(os.path.join(ROOT, "docs", "plugin.md"), encoding="utf-8") as f:
            documented = documented_versions(f.read())
        self.assertEqual(documented, exported_versions(PLUGIN))

    def test_the_table_reader_sees_a_changed_row(self):
        table = ("### Which NCCL binds what\n\n| NCCL | tuner | profiler | what |\n|---|---|---|---|\n"
                 "| 2.22 | v3 | older than v4, not exported: none | x |\n| 2.30 | v6 | v6 | y |\n")
        self.assertEqual(documented_versions(table), {"tuner": {3, 6}, "profiler": {6}})

    def test_no_other_doc_lists_the_versions(self):
        # A list such as "tuner v6/v5/v4" or "v5, v4, v3, v2" elsewhere would drift from the table.
        pattern = re.compile(r"\bv\d(?:\s*(?:/|,|, and|and)\s*v\d){2,}")
        for name in ["README.md"] + [os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))]:
            if not name.endswith(".md") or name == os.path.join("docs", "plugin.md"):
                continue
            with open(os.path.join(ROOT, name), encoding="utf-8") as f:
                self.assertIsNone(pattern.search(f.read()), name)


if __name__ == "__main__":
    PLUGIN = sys.argv.pop(1)
    unittest.main()
