"""`python -m collmc ARGS...` is the collmc command line: it runs the collmc binary with ARGS."""
from __future__ import annotations

import os
import sys

from collmc._binary import CollmcNotFound, find_collmc


def main(argv: list[str]) -> int:
    try:
        exe = find_collmc()
    except CollmcNotFound as e:
        print(f"collmc: {e}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [exe, *argv])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
