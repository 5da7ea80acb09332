"""The `ncclbot` console script of the Python package: the CLI itself, run in process."""

from __future__ import annotations

import sys

from . import _core


def main() -> int:
    sys.stdout.flush()
    code, _, _ = _core.run_command(sys.argv[1:], None, False)
    return code


if __name__ == "__main__":
    sys.exit(main())
