#!/usr/bin/env python3
"""scripts/check_layers.py catches what it exists for: on a made-up tree, each planted include outside
the allowed-edge graph is one line naming the file, the line and the edge; the graph's own faults (a
cycle, an unused edge, an undeclared folder) are caught; and the drawing is the graph.

Usage: python3 tests/scripts/check_layers_test.py   (exit 0 when every case passes)
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_layers  # noqa: E402

# A three-folder stack: core at the bottom, io on it, study on io.
GRAPH = """
[may_include]
core = []
io = []
study = ["io"]
"""
# Includes every rule allows: own folder, a file beside, core, a listed edge, version.hpp, a public header.
ALLOWED_TREE = {
    "src/study/A.cpp": '#include "study/A.hpp"\n#include "ncclbot/core/C.hpp"\n#include "io/B.hpp"\n'
                       '#include "ncclbot/version.hpp"\n#include "ncclbot/io/D.hpp"\n',
    "src/study/A.hpp": '#include "E.hpp"\n',
    "src/study/E.hpp": "",
    "src/io/B.hpp": '#include "core/F.hpp"\n',
    "include/ncclbot/io/D.hpp": '#include "ncclbot/core/C.hpp"\n#include "G.hpp"\n',
    "include/ncclbot/io/G.hpp": "",
    "include/ncclbot/core/C.hpp": "",
    "src/core/F.hpp": "",
    "tests/study/T.hpp": "",
}


def make_tree(root, files, graph=GRAPH):
    for rel, text in {**files, "scripts/layers.toml": graph}.items():
        path = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def found(files, graph=GRAPH):
    with tempfile.TemporaryDirectory() as root:
        make_tree(root, files, graph)
        return check_layers.violations(root, check_layers.load_graph(os.path.join(root, "scripts", "layers.toml")))


class Includes(unittest.TestCase):
    def test_what_the_graph_allows_passes(self):
        self.assertEqual(found(ALLOWED_TREE), [])

    def test_a_planted_back_edge_names_file_line_and_edge(self):
        tree = dict(ALLOWED_TREE, **{"src/io/B.hpp": '#include "core/F.hpp"\n#include "study/A.hpp"\n'})
        self.assertEqual(found(tree), ["src/io/B.hpp:2: includes study/A.hpp: io -> study is not an allowed edge "
                                       "(scripts/layers.toml)"])

    def test_a_planted_public_include_of_a_folder_not_listed_is_an_edge_too(self):
        tree = dict(ALLOWED_TREE, **{"src/core/F.hpp": '#include "ncclbot/io/D.hpp"\n'})
        self.assertEqual(found(tree), ["src/core/F.hpp:1: includes ncclbot/io/D.hpp: core -> io is not an allowed "
                                       "edge (scripts/layers.toml)"])

    def test_a_test_header_a_private_header_in_a_public_one_and_an_unknown_name(self):
        tree = dict(ALLOWED_TREE, **{"src/io/B.hpp": '#include "core/F.hpp"\n#include "study/T.hpp"\n',
                                     "include/ncclbot/core/C.hpp": '#include "core/F.hpp"\n#include "H.hpp"\n'})
        self.assertEqual(found(tree), [
            "include/ncclbot/core/C.hpp:1: includes core/F.hpp, a private header from a public one",
            "include/ncclbot/core/C.hpp:2: includes H.hpp, which is no file beside it and names no folder",
            "src/io/B.hpp:2: includes study/T.hpp, a test header"])

    def test_a_folder_the_graph_does_not_name(self):
        tree = dict(ALLOWED_TREE, **{"src/newmodule/N.cpp": "", "src/core/F.hpp": '#include "other/O.hpp"\n'})
        self.assertEqual(found(tree), ["src/core/F.hpp:1: includes other/O.hpp: folder 'other' is not in "
                                       "scripts/layers.toml",
                                       "src/newmodule/N.cpp:1: folder 'newmodule' is not in scripts/layers.toml"])

    def test_two_headers_of_one_name(self):
        tree = dict(ALLOWED_TREE, **{"src/io/E.hpp": ""})
        self.assertEqual(found(tree), ["src/study/E.hpp:1: has the file name of src/io/E.hpp (name one of them for "
                                       "what it holds)"])


class Graph(unittest.TestCase):
    def test_an_edge_no_include_uses_must_go(self):
        graph = GRAPH.replace('study = ["io"]', 'study = ["extra", "io"]\nextra = []')
        self.assertEqual(found(ALLOWED_TREE, graph), ["scripts/layers.toml: study -> extra is used by no include "
                                                      "(remove it)"])

    def test_the_bottom_is_listed_nowhere(self):
        graph = GRAPH.replace('study = ["io"]', 'study = ["core", "io"]')
        self.assertEqual(found(ALLOWED_TREE, graph), ["scripts/layers.toml: study -> core: every folder may include "
                                                      "core, so no list names it"])

    def test_a_cycle_and_an_undeclared_target(self):
        graph = GRAPH.replace('io = []', 'io = ["study", "x"]')
        self.assertEqual(check_layers.graph_problems(check_layers.load_graph_text(graph)), [
            "scripts/layers.toml: io -> x: x is no folder of the graph",
            "scripts/layers.toml: the graph has a cycle: io -> study -> io"])

    def test_the_real_graph_has_no_cycle(self):
        self.assertEqual(check_layers.graph_problems(check_layers.load_graph(os.path.join(ROOT, check_layers.GRAPH))),
                         [])


class Drawing(unittest.TestCase):
    def test_the_drawing_of_a_small_graph(self):
        graph = check_layers.load_graph_text(GRAPH + 'lonely = []\n')
        self.assertEqual(check_layers.drawing(graph), textwrap.dedent("""\
            ```mermaid
            flowchart TD
              core["core: every folder may include it"]
              study --> io
              lonely
            ```"""))

    def test_a_stale_drawing_fails_and_update_docs_writes_the_graph(self):
        doc = "# A\n\ntext\n<!-- layers:begin -->\nold\n<!-- layers:end -->\nmore text\n"
        script = os.path.join(ROOT, "scripts", "check_layers.py")
        with tempfile.TemporaryDirectory() as root:
            make_tree(root, dict(ALLOWED_TREE, **{"docs/architecture.md": doc}))
            stale = subprocess.run([sys.executable, script, "--drawing", root], capture_output=True, text=True)
            self.assertEqual(stale.returncode, 1, stale.stdout)
            self.assertIn("docs/architecture.md: the drawing", stale.stdout)
            subprocess.run([sys.executable, script, "--update-docs", root], check=True)
            self.assertEqual(subprocess.run([sys.executable, script, "--drawing", root]).returncode, 0)
            with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
                text = f.read()
        self.assertTrue(text.startswith("# A\n\ntext\n<!-- layers:begin -->\n```mermaid\n"))
        self.assertTrue(text.endswith("  study --> io\n```\n<!-- layers:end -->\nmore text\n"))


if __name__ == "__main__":
    unittest.main()
