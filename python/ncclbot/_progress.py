"""Progress of long commands (replay, tune, the study runner): a tqdm bar in notebooks, a line on a
terminal's stderr, nothing otherwise. The compiled module reports at most every 200 ms."""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator, Optional

from . import _core


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Display:
    """Shows one progress sequence: tqdm.auto when installed, else a redrawn stderr line."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._label = ""
        try:
            from tqdm.auto import tqdm

            self._tqdm: Any = tqdm
        except ImportError:
            self._tqdm = None

    def __call__(self, label: str, done: int, total: int, last: bool) -> None:
        if self._tqdm is not None:
            if self._bar is None or label != self._label:
                self.close()
                self._bar = self._tqdm(total=total, desc=label, unit="unit")
                self._label = label
            self._bar.update(done - self._bar.n)
            if last:
                self.close()
            return
        pct = 100.0 * done / total if total else 100.0
        sys.stderr.write(f"\r{label}: {pct:3.0f}% {done}/{total} units" + ("\n" if last else ""))
        sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextlib.contextmanager
def progress_for(show: Optional[bool]) -> Iterator[None]:
    """While the block runs, long commands report progress when `show` is True, or when it is None
    and Python runs in a notebook or on a terminal."""
    if show is None:
        show = _interactive()
    if not show:
        yield
        return
    display = _Display()
    _core.set_progress(display)
    try:
        yield
    finally:
        _core.set_progress(None)
        display.close()
