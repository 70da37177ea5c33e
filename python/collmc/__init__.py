"""collmc from Python: check a scenario, import a job's traces, generate Megatron-LM layouts.

    import collmc
    r = collmc.check("examples/reg_cross_order.cmc")
    r.verdict            # "deadlock"
    r.cycle[0].call      # "register A wa"

Everything runs the collmc binary (found next to this package, in $COLLMC, or on PATH) and reads its
JSON result (docs/RESULT_FORMAT.md). Standard library only.
"""
from __future__ import annotations

import json as _json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from collmc._binary import CollmcNotFound, find_collmc, run as _run
from collmc.result import Hop, Location, Position, Result, Step, parse_result

__all__ = ["check", "import_traces", "Imported", "Result", "Hop", "Location", "Position", "Step", "CollmcError",
           "CollmcInputError", "CollmcNotFound", "HangPredicted", "find_collmc", "gen"]
__version__ = "0.1.0"

# The exit statuses of `collmc check` (README): 0 safe, 1 a violation, 2 bad input, 3 inconclusive,
# 4 safe in the model while the recorded run hung, 130 interrupted.
EXIT_SAFE, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE, EXIT_MODEL_ONLY = 0, 1, 2, 3, 4


class CollmcError(RuntimeError):
    """collmc did not give an answer (it crashed, was interrupted, or printed no result)."""

    def __init__(self, message: str, *, exit_code: int = -1, stderr: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


class CollmcInputError(CollmcError):
    """Bad input (exit 2): the message names the file, line and column and what was expected."""


class HangPredicted(RuntimeError):
    """Raised by a precheck (collmc.torch) on every rank before any of them blocks: the planned calls can hang.
    `result` is the check's Result (its cycle, where each rank stands); `sources` the program lines on the cycle."""

    def __init__(self, message: str, result: Optional[Result] = None, sources: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.result = result
        self.sources = list(sources)


PathOrText = Union[str, os.PathLike]


def _is_scenario_text(s: str) -> bool:
    return "\n" in s or s.lstrip().startswith("ranks ")


def check(scenario: PathOrText, *, open_orders: bool = False, shortest: bool = False, no_reduction: bool = False,
          max_states: Optional[int] = None, time_limit: Optional[float] = None,
          extra_args: Sequence[str] = ()) -> Result:
    """Checks a scenario file (a path) or scenario text (a string holding the scenario) and returns the Result.
    Raises CollmcInputError for a scenario that does not parse (exit 2), CollmcError when there is no result."""
    text: Optional[str] = None
    target = os.fspath(scenario)
    if not os.path.exists(target) and _is_scenario_text(target):
        text, target = target, "-"
    args = ["check", target, "--json", "-"]
    if shortest:
        args.append("--shortest")
    if no_reduction:
        args.append("--no-reduction")
    if max_states is not None:
        args += ["--max-states", str(max_states)]
    if time_limit is not None:
        args += ["--time-limit", str(time_limit)]
    del open_orders  # a scenario's orders are opened at import (import_traces(open_orders=True))
    args += list(extra_args)
    p = _run(args, input_text=text)
    if p.returncode == EXIT_BAD_INPUT:
        raise CollmcInputError(p.stderr.strip() or "bad input", exit_code=2, stderr=p.stderr)
    try:
        j = _json.loads(p.stdout)
    except ValueError:
        raise CollmcError(f"collmc check exited {p.returncode} without a JSON result: {p.stderr.strip()}",
                          exit_code=p.returncode, stderr=p.stderr) from None
    return parse_result(j, exit_code=p.returncode, report=p.stderr, scenario_text=text)


@dataclass
class Imported:
    """A scenario imported from traces (`collmc trace import`)."""
    path: str
    text: str
    summary: str  # what the import printed: communicators, who is missing from which call, where ranks stopped
    prediction: str = ""
    lines: list[str] = field(default_factory=list)

    def check(self, **kwargs: object) -> Result:
        return check(self.path, **kwargs)  # type: ignore[arg-type]


def import_traces(paths: Union[PathOrText, Iterable[PathOrText]], output: Optional[PathOrText] = None, *,
                  open_orders: bool = False, full_history: bool = False, keep_order: Sequence[str] = (),
                  trace_format: str = "auto", name: Optional[str] = None, predict: bool = False) -> Imported:
    """`collmc trace import PATHS -o OUTPUT`: a scenario from recorder traces (NCCL, MPI, the torch shim), Flight
    Recorder dumps or NCCL logs. Without OUTPUT the scenario goes to a temporary file (Imported.path)."""
    plist = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]
    if output is None:
        fd, out = tempfile.mkstemp(prefix="collmc-import-", suffix=".cmc")
        os.close(fd)
    else:
        out = os.fspath(output)
    args = ["trace", "import", *plist, "-o", out, "--format", trace_format]
    if open_orders:
        args.append("--open-orders")
        if not predict:
            args.append("--no-predict")
    if full_history:
        args.append("--full-history")
    for k in keep_order:
        args += ["--keep-order", k]
    if name:
        args += ["--name", name]
    p = _run(args)
    if p.returncode == EXIT_BAD_INPUT:
        raise CollmcInputError(p.stderr.strip() or "bad trace input", exit_code=2, stderr=p.stderr)
    if p.returncode != 0 or not Path(out).is_file():
        raise CollmcError(f"collmc trace import exited {p.returncode}: {p.stderr.strip()}", exit_code=p.returncode,
                          stderr=p.stderr)
    summary = p.stderr + p.stdout
    return Imported(path=out, text=Path(out).read_text(), summary=summary, lines=summary.splitlines())


from collmc import gen  # noqa: E402  (the generators use check's helpers above)
