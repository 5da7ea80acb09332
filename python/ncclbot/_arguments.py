"""Each public function's arguments checked by type before a command line is built from them.

A command line is text: True would become a bare flag that swallows the next word, and a NUL byte
would end a path early in the library. So every argument is checked against its kind here and a
wrong one raises ArgumentError naming the function and the argument.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from typing import Any, Callable, Mapping

from ._command import InputError


class ArgumentError(InputError, TypeError):
    """A function's argument of the wrong type or value (raised before anything runs)."""

    def __init__(self, function: str, argument: str, problem: str) -> None:
        super().__init__(f"ncclbot: {function}: {argument} {problem}", 2)


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def whole(function: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(function, name, f"must be an integer, got {shown(value)}")


def real(function: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(function, name, f"must be a number, got {shown(value)}")
    if not math.isfinite(value):
        raise ArgumentError(function, name, f"must be finite, got {shown(value)}")


def text(function: str, name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise ArgumentError(function, name, f"must be a string, got {shown(value)}")
    if "\0" in value:
        raise ArgumentError(function, name, f"holds a NUL byte: {shown(value)}")


def flag(function: str, name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ArgumentError(function, name, f"must be True or False, got {shown(value)}")


def path(function: str, name: str, value: Any) -> None:
    if not isinstance(value, (str, os.PathLike)):
        raise ArgumentError(function, name, f"must be a path (str or os.PathLike), got {shown(value)}")
    fspath = os.fspath(value)
    if not isinstance(fspath, str):
        raise ArgumentError(function, name, f"must be a text path, got {shown(value)}")
    text(function, name, fspath)


def list_of(kind: Callable[[str, str, Any], None], single_allowed: bool = False) -> Callable[[str, str, Any], None]:
    """A sequence (not a string) whose entries are of `kind`; with single_allowed, one bare entry too."""

    def check(function: str, name: str, value: Any) -> None:
        if single_allowed and isinstance(value, str):
            kind(function, name, value)
            return
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise ArgumentError(function, name, f"must be a list, got {shown(value)}")
        for i, entry in enumerate(value):
            kind(function, f"{name}[{i}]", entry)

    return check


def paths(function: str, name: str, value: Any) -> None:
    """One path, or a list of paths."""
    if isinstance(value, (str, os.PathLike)):
        path(function, name, value)
    else:
        list_of(path)(function, name, value)


def check_all(function: str, kinds: Mapping[str, Callable[[str, str, Any], None]], values: Mapping[str, Any]) -> None:
    """Checks each value that is not None against its kind; a name with no kind is refused."""
    for name, value in values.items():
        if name not in kinds:
            raise ArgumentError(function, name, "is not an argument of this function")
        if value is not None:
            kinds[name](function, name, value)


def checked(**kinds: Callable[[str, str, Any], None]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Checks the decorated function's named arguments by kind before it runs; None passes only
    where it is the parameter's default (the CLI's own default). Arguments with no kind given here
    are the function's own to check."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            for name, value in bound.arguments.items():
                parameter = signature.parameters[name]
                if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                    check_all(fn.__name__, kinds, value)
                elif name in kinds and not (value is None and parameter.default is None):
                    kinds[name](fn.__name__, name, value)  # None only where it is the default
            return fn(*args, **kwargs)

        return call

    return wrap
