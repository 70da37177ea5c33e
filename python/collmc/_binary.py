"""Finding and running the collmc binary (the checker, readers and generators live there)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional, Sequence


class CollmcNotFound(RuntimeError):
    """No collmc binary: not next to the package, not in $COLLMC, not on PATH."""


def _candidates() -> list[Path]:
    """The binary built with this package (BUILD/python/collmc -> BUILD/cli/collmc), then the one installed with
    it (PREFIX/lib/collmc/python/collmc, or LIBDIR deeper -> PREFIX/bin/collmc)."""
    here = Path(__file__).resolve().parent
    out = [here.parent.parent / "cli" / "collmc"]
    out += [up / "bin" / "collmc" for up in list(here.parents)[2:5]]
    return out


def find_collmc() -> str:
    """The collmc binary: $COLLMC, else the one installed or built with this package, else PATH."""
    env = os.environ.get("COLLMC")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise CollmcNotFound(f"$COLLMC names no executable: {env}")
        return env
    for c in _candidates():
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("collmc")
    if found:
        return found
    raise CollmcNotFound("cannot find the collmc binary: set $COLLMC to its path, or put it on PATH")


def run(args: Sequence[str], *, input_text: Optional[str] = None, capture: bool = True,
        timeout: Optional[float] = None) -> subprocess.CompletedProcess[str]:
    """Runs `collmc ARGS...` and returns the finished process (never raises for a nonzero status)."""
    return subprocess.run([find_collmc(), *args], input=input_text, text=True, timeout=timeout,
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if capture else None, check=False)
