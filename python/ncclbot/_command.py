"""Running one ncclbot library call or command line in process and turning its outcome into Python.

Every public function of the package ends here: it runs the command's library call in the compiled
module (typed options in, the document the command's --json prints out), or a command line where a
call cannot take what was given; the GIL is released meanwhile. A failure raises the exception of
its exit code, carrying the CLI's one-line message.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Iterable, Mapping, Optional, Sequence

from . import _core
from ._progress import progress_for


class NcclbotError(RuntimeError):
    """An ncclbot command failed (the CLI's exit code 1: an internal failure)."""

    def __init__(self, line: str, exit_code: int) -> None:
        super().__init__(line)
        self.line = line
        self.exit_code = exit_code


class InputError(NcclbotError, ValueError):
    """Bad input or usage: the CLI's exit code 2, with its message (file, line and reason)."""


def raise_for(exit_code: int, err: str) -> None:
    """Raises the exception of a failed command's exit code; returns on success."""
    if exit_code == 0:
        return
    lines = [ln for ln in err.splitlines() if ln.startswith("ncclbot: ")]
    line = lines[-1] if lines else (err.strip().splitlines() or [f"ncclbot: exit code {exit_code}"])[-1]
    raise (InputError if exit_code == 2 else NcclbotError)(line, exit_code)


def option_words(options: Mapping[str, Any]) -> list[str]:
    """--name value words: None is left out, True is a bare flag, a list of numbers or names is
    one comma-joined value, and a list under a repeatable option (`repeat=`) repeats it."""
    words: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            words += [flag, ",".join(str(v) for v in value)]
        else:
            words += [flag, str(value)]
    return words


def repeated(flag: str, values: Iterable[str]) -> list[str]:
    words: list[str] = []
    for v in values:
        words += [flag, str(v)]
    return words


class NcclbotWarning(UserWarning):
    """A warning a command printed (a line starting "ncclbot: warning")."""


def run(args: Sequence[str], input: Optional[str] = None, progress: Optional[bool] = None) -> str:
    """Runs `ncclbot ARGS...` in process and returns its standard output. Of its standard error
    (with --json, the human summary the document repeats), warnings become NcclbotWarning."""
    if input is not None and not isinstance(input, str):
        raise InputError(f"ncclbot: command: input must be a string (the JSON text a command reads), got {type(input).__name__}", 2)
    # A NUL byte in an argument is refused by the library's own argument reader (exit 2).
    with progress_for(progress):
        code, out, err = _core.run_command([str(a) for a in args], input)
    raise_for(code, err)
    for line in err.splitlines():
        if line.startswith("ncclbot: warning"):
            warnings.warn(line, NcclbotWarning, stacklevel=3)
    return out


def _call_text(value: Any) -> Any:
    """A value as the library call takes it: what the CLI would read from the word option_words() writes."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return str(value) if isinstance(value, float) else value


def call_holds(ints: Iterable[Optional[int]], unsigned: Iterable[Optional[int]] = (),
               unsigned32: Iterable[Optional[int]] = ()) -> bool:
    """Whether a library call's C types hold these numbers (None: left out): `ints` as 32-bit ints,
    `unsigned` as 64-bit unsigned ones, `unsigned32` as 32-bit unsigned ones (thread counts). A number
    that does not fit goes through the command line, whose one-line error names it."""
    return (all(v is None or -2**31 <= v < 2**31 for v in ints)
            and all(v is None or 0 <= v < 2**64 for v in unsigned)
            and all(v is None or 0 <= v < 2**32 for v in unsigned32))


def run_call(call: Any, *args: Any, progress: Optional[bool] = None, **options: Any) -> Any:
    """A library call of the compiled module (no command line): the document its command's --json
    prints. Its failure raises as a command's would; its warnings become NcclbotWarning."""
    with progress_for(progress):
        code, doc, err = call(*args, **options)
    raise_for(code, err)
    for line in err.splitlines():
        if line.startswith("ncclbot: warning"):
            warnings.warn(line, NcclbotWarning, stacklevel=3)
    return doc


def run_feedback_call(call: Any, *args: Any, progress: Optional[bool], options: Mapping[str, Any]) -> Any:
    """`replay` or `tune` through the library's call (no command line): the document its --json
    prints. Lists go as lists of their words and numbers the command line would read as text
    (the observation cost) as that text, so the call reads what the CLI would."""
    typed = {k: _call_text(v) for k, v in options.items()}
    for text in ("as_deployed", "nccl_version", "backend", "objective", "raw"):
        if typed.get(text) is not None:
            typed[text] = str(typed[text])
    return run_call(call, *args, progress=progress, **typed)


def run_json(args: Sequence[str], input: Optional[str] = None, progress: Optional[bool] = None) -> Any:
    """Runs a command with --json and returns the document it printed."""
    return json.loads(run(list(args) + ["--json"], input, progress))


def path_text(path: "os.PathLike[str] | str") -> str:
    return os.fspath(path)
