"""Recording from inside the user's program (the torch shim). Importing this package installs the shim when
$COLLMC_RECORD (or $COLLMC_TRACE_DIR, which `collmc record` sets) names a directory; it imports nothing of
collmc's readers or checker."""
from __future__ import annotations

from collmc.record.torch_shim import install, trace_dir

__all__ = ["install", "trace_dir"]

install()
