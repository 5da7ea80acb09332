#!/usr/bin/env python3
"""Every file the repository cites is in the repository.

The project's code, comments and docs cite only what a clone holds: no design or reference notes
kept outside it, no path into the folder beside the clone that holds third-party data, and no
repository path that does not exist. Third-party facts are cited at their primary source (NCCL's
own files at a tag, papers, public issues), or through a doc of this repository that states them
with that source (docs/architecture.md, "Citations").

Checked: the repository's text files (`git ls-files`, plus new files git does not ignore; without
git, every file under ROOT). tests/data/ and tests/fuzz/seeds/ hold fixtures and are skipped.

  (a) A mention of a note kept outside the repository: the design or the style note (DESIGN or
      STYLE, as Markdown), a reference note (a Markdown file under reference/), or the third-party
      folder beside the clone by its relative path (the parent folder's `shared`). The one
      exception is the default value of $NCCLBOT_SHARED_DIR where that variable is set: the
      default is what the variable names.
  (b) A repository path, starting with docs/ scripts/ src/ include/ kernels/ tests/ data/
      experiments/ python/ cmake/ or .ci/, that names no file or folder of the repository. A name
      without its extension counts when one file has it with one (test names such as
      tests/sim/hipipe_arm_test).
  (c) A header or source named from its layer folder, as comments do (`policy/ucb1.hpp`,
      `replay/replay.hpp`), that is in none of include/ncclbot/, src/, kernels/ or the citing
      file's folder; #include lines are left to the compiler.
  (d) A Markdown file named without a folder (`notes.md`) that no file of the repository is called.

Not findings: placeholders (an all-capitals part such as NAME, X, PATH, DIR; <...>; %r; ...),
globs that match (`data/hipipe/*.toml`; `{a,b}` is expanded), paths inside another path
(`build/tests/`, `P/include/ncclbot`, `$NCCLBOT_SHARED_DIR/data/...`, URLs), another
repository's own paths (a path right after the repository's name, on its line or at the end of
the line before: `NCCL v2.28.9-1 src/graph/tuning.cc`, `nccl-tests src/util.cu`), and the
entries of ALLOWED below, each with its reason.

Usage: python3 scripts/check_citations.py [ROOT]   one line `FILE:LINE: cites MISSING` per finding;
                                                    exit 1 if there is one, else 0 and a summary
       python3 scripts/check_citations.py --self-test
"""
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

PREFIXES = ("docs", "scripts", "src", "include", "kernels", "tests", "data", "experiments", "python",
            "cmake", ".ci")
SKIP_DIRS = ("tests/data/", "tests/fuzz/seeds/", ".git/", "out/")  # and build*/ folders
TEXT_SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".inc", ".py", ".sh", ".md", ".toml", ".txt",
                 ".json", ".cmake", ".in", ".map", ".gitignore", ".clang-format", ".typed", ".conf")
CODE_SUFFIXES = ("hpp", "h", "cpp", "cu", "cuh", "inc")
# This file spells the patterns it looks for and builds a tree of bad citations in its self-test.
SELF = "scripts/check_citations.py"

# (a) Spelled in pieces so that this file does not match itself.
OUTSIDE = re.compile(r"\b(?:DESIGN|STYLE)" + r"\.md\b|\breference/[A-Za-z0-9_-]+" + r"\.md\b|"
                     r"\.\." + r"/shared\b")
SHARED_DEFAULT = re.compile(r"NCCLBOT_SHARED_DIR\b[^#\n]{0,40}\.\." + r"/shared")

# A token that starts a word: not inside another path, a URL, a variable or an option value.
START = r"(?<![\w./$~@:*-])"
TOKEN = r"(?:[\w.*?%<>+/-]|\{[^}\s]*\})*"
PATH = re.compile(START + r"(?:" + "|".join(re.escape(p) for p in PREFIXES) + r")/" + TOKEN)
BARE_MD = re.compile(START + r"[\w-]+\.md\b")
INCLUDE_LINE = re.compile(r"^\s*#\s*include\b")
# Another repository named right before a path (optionally with a tag, `'s`, "at tag"): its path.
THIRD_PARTY = re.compile(r"\b(?:NCCL|nccl|NVIDIA/nccl|nccl-tests|NVIDIA/nccl-tests|ASTRA-sim|astra-sim"
                         r"|astra-sim/astra-sim)(?:'s)?(?:\s+(?:at\s+)?(?:tag\s+)?v?\d[\w.-]*)?[\s`(\"]*$")
CONVENTIONAL_CAPS = {"README", "LICENSE", "CHANGELOG", "CMakeLists", "CMakePresets"}

# Citations that name no file of a clone and are right to, each with its reason.
ALLOWED = {
    ("tests/study/sensitivity_test.cpp", "data/s.csv"):
        "a sweep file the test writes into its temporary folder",
    ("pyproject.toml", "tests/data/big"):
        "an sdist exclusion: keeps a local folder of large test data out of a source package if present",
}
# Markdown files the programs write (not in the repository), named in docs and comments.
OUTPUT_MD = {
    "report.md": "a study's report (`ncclbot run`, `ncclbot telemetry`)",
    "hipipe_summary.md": "the HiPIPE study's summary (`ncclbot hipipe --study`)",
}


def is_placeholder(path):
    """A path with a stand-in part: an all-capitals name (NAME, X, PATH, DIR), <...>, %r or ..."""
    if "<" in path or "%" in path or "..." in path:
        return True
    for part in path.split("/"):
        stem = part.split(".")[0]
        if stem and stem not in CONVENTIONAL_CAPS and re.fullmatch(r"[A-Z][A-Z0-9_]*", stem):
            return True
    return False


def expand_braces(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(path[:m.start()] + alt + path[m.end():])
    return out


def trim(token):
    while token and token[-1] in ".,:;)'\"`":
        token = token[:-1]
    return token


def listed_files(root):
    """The repository's files: git's tracked and not-ignored new files, or every file without git."""
    try:
        command = ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        out = subprocess.run(command, check=True, capture_output=True).stdout.decode("utf-8", "replace")
        files = sorted({f for f in out.split("\0") if f and os.path.isfile(os.path.join(root, f))})
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "out") and not d.startswith("build"))
        for name in names:
            files.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return sorted(files)


class Tree:
    def __init__(self, root):
        self.files = listed_files(root)
        self.file_set = set(self.files)
        self.dirs = {"/".join(f.split("/")[:i]) for f in self.files for i in range(1, f.count("/") + 1)}
        self.basenames = {f.rsplit("/", 1)[-1] for f in self.files}
        self.stems = {f.rsplit(".", 1)[0] for f in self.files if "." in f.rsplit("/", 1)[-1]}
        # Layer folders that comments name headers and sources from: include/ncclbot/X and src/X.
        layers = {d.split("/")[2] for d in self.dirs if d.startswith("include/ncclbot/")
                  and d.count("/") == 2}
        layers |= {d.split("/")[1] for d in self.dirs if d.startswith("src/") and d.count("/") == 1}
        layers.add("ncclbot")
        self.layer_path = re.compile(START + r"(?:" + "|".join(sorted(map(re.escape, layers))) + r")/" +
                                     TOKEN + r"\.(?:" + "|".join(CODE_SUFFIXES) + r")\b") if layers else None

    def exists(self, path):
        path = path.rstrip("/")
        if any(c in path for c in "*?["):
            return any(fnmatch.fnmatch(f, path) for f in self.files) or \
                any(fnmatch.fnmatch(d, path) for d in self.dirs)
        return path in self.file_set or path in self.dirs or path in self.stems


def scanned(rel):
    if rel == SELF or any(rel.startswith(d) for d in SKIP_DIRS) or ("/" in rel and rel.startswith("build")):
        return False
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(TEXT_SUFFIXES) or "." not in name


def third_party(previous, before):
    """Whether another repository is named right before a path: on its line, or at the end of the
    line before when the path starts a line (after a comment's leader: //, #, *)."""
    if THIRD_PARTY.search(before):
        return True
    rest = re.sub(r"^\s*(?://+|#+|\*+)?", "", before)
    return rest.strip(" `(\"") == "" and THIRD_PARTY.search(previous.rstrip() + " " + rest) is not None


def findings(root):
    tree = Tree(root)
    out = []
    for rel in tree.files:
        if not scanned(rel):
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        previous = ""
        for number, line in enumerate(lines, 1):
            found = []
            for m in OUTSIDE.finditer(line):
                if not (m.group(0).endswith("shared") and SHARED_DEFAULT.search(line)):
                    found.append((m.start(), m.end(), m.group(0)))
            for m in PATH.finditer(line):
                path = trim(m.group(0))
                if path.rstrip("/") in PREFIXES or is_placeholder(path) or (rel, path.rstrip("/")) in ALLOWED:
                    continue
                if all(tree.exists(p) for p in expand_braces(path)):
                    continue
                if third_party(previous, line[:m.start()]):
                    continue
                found.append((m.start(), m.end(), path))
            if tree.layer_path and not INCLUDE_LINE.match(line):
                for m in tree.layer_path.finditer(line):
                    path = trim(m.group(0))
                    if is_placeholder(path) or (rel, path) in ALLOWED:
                        continue
                    where = [path, "include/ncclbot/" + path, "include/" + path, "src/" + path,
                             "kernels/" + path, (folder + "/" if folder else "") + path]
                    if any(tree.exists(p) for p in where) or third_party(previous, line[:m.start()]):
                        continue
                    found.append((m.start(), m.end(), path))
            for m in BARE_MD.finditer(line):
                name = m.group(0)
                if name in tree.basenames or name in OUTPUT_MD or is_placeholder(name):
                    continue
                found.append((m.start(), m.end(), name))
            # One finding per place and name: a note caught by (a) is not reported again by (d), and
            # a name cited twice on one line is one finding.
            seen, named = [], set()
            for start, end, what in sorted(found):
                if any(start < e and s < end for s, e in seen) or what in named:
                    continue
                seen.append((start, end))
                named.add(what)
                out.append(f"{rel}:{number}: cites {what}")
            previous = line
    return out


def self_test():
    """One good citation and two bad ones: the checker must report exactly the two bad ones."""
    design = "DESIGN" + ".md"
    with tempfile.TemporaryDirectory() as root:
        files = {
            "docs/a.md": "See `src/b.cpp` (it exists).\nSee also " + design + ' "Contracts".\n',
            "src/b.cpp": "// Written from docs/a.md and docs/missing.md.\nint b;\n",
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        found = findings(root)
    want = ["docs/a.md:2: cites " + design, "src/b.cpp:1: cites docs/missing.md"]
    ok = sorted(found) == want
    print("citations self-test:", "ok" if ok else f"expected {want}, found {found}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) > 2 or sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
        return 0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isdir(root):
        print(f"check_citations: {root}: not a folder")
        return 2
    found = findings(root)
    for f in found:
        print(f)
    if found:
        print(f"citations: {len(found)} finding(s): cited files that are not in the repository")
        return 1
    print(f"citations: every cited file exists ({len(Tree(root).files)} files checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
