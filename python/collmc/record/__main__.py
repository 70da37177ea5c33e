"""`COLLMC_RECORD=DIR python -m collmc.record PROGRAM.py ARGS...`: runs PROGRAM with the torch shim installed."""
from __future__ import annotations

import runpy
import sys

from collmc.record.torch_shim import install


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: COLLMC_RECORD=DIR python -m collmc.record PROGRAM.py ARGS... (or -m MODULE ARGS...)",
              file=sys.stderr)
        return 2
    if not install():
        print("collmc.record: set COLLMC_RECORD=DIR (where the traces go)", file=sys.stderr)
        return 2
    if sys.argv[1] == "-m" and len(sys.argv) > 2:
        sys.argv = sys.argv[2:]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
