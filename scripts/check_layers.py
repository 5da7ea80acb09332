#!/usr/bin/env python3
"""Every #include of the code is an edge of the allowed-edge graph scripts/layers.toml.

A file of folder F (src/F/, include/ncclbot/F/, kernels/ as `kernels`, python/src/ as `python`)
may include its own folder, `core`, ncclbot/version.hpp and the folders layers.toml lists for F.
Besides: the graph has no cycle, every edge it lists is used by some include (so it stays the
smallest graph the tree needs), nothing outside tests/ includes a test header, a public header
(include/ncclbot/) includes only public headers, and no two headers share a file name.

Usage: python3 scripts/check_layers.py [ROOT]        one line per violation, `FILE:LINE: ... (F -> G)`;
                                                     exit 1 if there is one
       python3 scripts/check_layers.py --drawing [ROOT]      exit 1 unless docs/architecture.md
                                                             draws layers.toml as --draw prints it
       python3 scripts/check_layers.py --draw [ROOT]         print the drawing (a Mermaid graph)
       python3 scripts/check_layers.py --update-docs [ROOT]  write it into docs/architecture.md
"""
import os
import re
import sys
import tomllib

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".hpp", ".cpp", ".h", ".cu", ".cuh", ".inc")
TREES = ("include/ncclbot", "src", "kernels", "python/src")
GRAPH = "scripts/layers.toml"
DOC = "docs/architecture.md"
BEGIN, END = "<!-- layers:begin -->", "<!-- layers:end -->"
BOTTOM = "core"  # every folder may include it
ANYONE = "ncclbot/version.hpp"


def load_graph(path):
    with open(path, encoding="utf-8") as f:
        return load_graph_text(f.read())


def load_graph_text(text):
    """{folder: set of folders it may include} from layers.toml's text, in the file's order."""
    table = tomllib.loads(text).get("may_include", {})
    return {folder: set(targets) for folder, targets in table.items()}


def graph_problems(graph):
    """Edges to folders the file does not declare, to the bottom (always allowed), and a cycle."""
    out = [f"{GRAPH}: {a} -> {b}: {b} is no folder of the graph"
           for a in graph for b in sorted(graph[a]) if b not in graph]
    out += [f"{GRAPH}: {a} -> {BOTTOM}: every folder may include {BOTTOM}, so no list names it"
            for a in graph if BOTTOM in graph[a]]
    cycle = find_cycle(graph)
    if cycle:
        out.append(f"{GRAPH}: the graph has a cycle: {' -> '.join(cycle)}")
    return out


def find_cycle(graph):
    """One cycle of the graph as a list of folders (first = last), or None."""
    colour = {}  # 1: on the current path, 2: done

    def visit(node, path):
        colour[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if colour.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in colour:
                cycle = visit(nxt, path + [nxt])
                if cycle:
                    return cycle
        colour[node] = 2
        return None

    for start in graph:
        cycle = visit(start, [start]) if start not in colour else None
        if cycle:
            return cycle
    return None


def folder_of_file(rel):
    """The folder a file of the code belongs to; None for one outside every folder (version.hpp)."""
    parts = rel.split("/")
    if parts[0] == "kernels":
        return "kernels"
    if parts[:2] == ["python", "src"]:
        return "python"
    if parts[0] == "include":
        return parts[2] if len(parts) > 3 else None
    return parts[1] if len(parts) > 2 else None


def include_target(root, rel, text):
    """What an include names: ("folder", F), ("public", F) for a public header, ("test", None),
    ("anyone", None) or ("unknown", None)."""
    if text == ANYONE:
        return "anyone", None
    beside = os.path.normpath(os.path.join(os.path.dirname(rel), text)).replace(os.sep, "/")
    if os.path.isfile(os.path.join(root, beside)):  # quotes look beside the including file first
        if beside.startswith(("tests/", "scripts/")):
            return "test", None
        return ("public" if beside.startswith("include/") else "folder"), folder_of_file(beside)
    parts = text.split("/")
    if parts[0] in ("tests", "support") or ".." in parts:
        return "test", None
    if parts[0] == "ncclbot" and len(parts) > 2:
        return "public", parts[1]
    if len(parts) > 1:
        if not os.path.exists(os.path.join(root, "src", text)) and os.path.exists(os.path.join(root, "tests", text)):
            return "test", None  # found only on the tests' include path
        return "folder", parts[0]
    return "unknown", None


def code_files(root):
    for base in TREES:
        for folder, dirs, files in os.walk(os.path.join(root, base)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCES):
                    yield os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")


def include_problem(graph, rel, own, kind, target, text):
    """Why one include is not allowed, or None; records nothing."""
    if kind == "test":
        return f"includes {text}, a test header"
    if kind == "unknown":
        return f"includes {text}, which is no file beside it and names no folder"
    if kind == "anyone":
        return None
    if rel.startswith("include/") and kind != "public":
        return f"includes {text}, a private header from a public one"
    if target not in graph:
        return f"includes {text}: folder '{target}' is not in {GRAPH}"
    if own is None or target in (own, BOTTOM) or target in graph[own]:
        return None
    return f"includes {text}: {own} -> {target} is not an allowed edge ({GRAPH})"


def violations(root, graph):
    out, used = graph_problems(graph), set()
    for rel in code_files(root):
        own = folder_of_file(rel)
        if own is not None and own not in graph:
            out.append(f"{rel}:1: folder '{own}' is not in {GRAPH}")
            continue
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target = include_target(root, rel, m.group(1))
            problem = include_problem(graph, rel, own, kind, target, m.group(1))
            if problem:
                out.append(f"{rel}:{number}: {problem}")
            elif kind in ("folder", "public") and own is not None:
                used.add((own, target))
    out += [f"{GRAPH}: {a} -> {b} is used by no include (remove it)"
            for a in graph for b in sorted(graph[a]) if (a, b) not in used]
    return out + same_named_headers(root)


def same_named_headers(root):
    """Headers of different folders that share a file name: an include then says less than it seems."""
    seen, out = {}, []
    for rel in code_files(root):
        name = rel.rsplit("/", 1)[-1]
        if name.endswith((".hpp", ".h", ".cuh")):
            if name in seen:
                out.append(f"{rel}:1: has the file name of {seen[name]} (name one of them for what it holds)")
            else:
                seen[name] = rel
    return out


def drawing(graph):
    """The graph as a Mermaid flowchart, includers above what they include, one line per folder."""
    lines = ["```mermaid", "flowchart TD", f'  {BOTTOM}["{BOTTOM}: every folder may include it"]']
    drawn = {BOTTOM}
    for folder, targets in graph.items():
        if targets:
            lines.append(f"  {folder} --> {' & '.join(sorted(targets))}")
            drawn |= {folder} | targets
    lines += [f"  {folder}" for folder in graph if folder not in drawn]
    return "\n".join(lines + ["```"])


def drawn_in_doc(text):
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")


def main(argv):
    mode = argv[0] if argv and argv[0].startswith("--") else None
    rest = argv[1:] if mode else argv
    root = rest[0] if rest else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    graph = load_graph(os.path.join(root, GRAPH))
    doc_path = os.path.join(root, DOC)
    if mode == "--draw":
        print(drawing(graph))
        return 0
    if mode in ("--drawing", "--update-docs"):
        with open(doc_path, encoding="utf-8") as f:
            text = f.read()
        drawn = drawn_in_doc(text)
        if mode == "--update-docs" and drawn is not None:
            head, tail = text.split(BEGIN, 1)[0], text.split(BEGIN, 1)[1].split(END, 1)[1]
            with open(doc_path, "w", encoding="utf-8") as f:
                f.write(f"{head}{BEGIN}\n{drawing(graph)}\n{END}{tail}")
            return 0
        if drawn != drawing(graph):
            print(f"{DOC}: the drawing between {BEGIN} and {END} is not {GRAPH} "
                  f"(python3 scripts/check_layers.py --update-docs writes it)")
            return 1
        return 0
    if mode is not None:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    found = violations(root, graph)
    for v in found:
        print(v)
    print(f"layers: {len(found)} violations")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
