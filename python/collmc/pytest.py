"""pytest plugin: `pytest -p collmc.pytest`. A test marked

    @pytest.mark.collmc_distributed(world=2)
    def test_two_groups(rank):
        ...torch.distributed calls...

runs as WORLD torch.distributed ranks (gloo by default: `backend=`) under `collmc record` with the torch shim.
A run that hangs is stopped by record's hang detection (`hang_after` seconds without progress, every rank
inside a call) instead of waiting for a timeout; the recorded calls are imported with `--open-orders`
(`open_orders=False` to check only the recorded order) and checked, and the test fails with collmc's
counterexample (the wait-for cycle, where each rank stands, the program's source lines) when any order of
them can hang, or when the run hung. A rank that fails otherwise fails the test with its output."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any

import pytest

import collmc

MARKER = "collmc_distributed"


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(world=2, backend='gloo', hang_after=2, time_limit=120, open_orders=True): run the test as WORLD "
        "torch.distributed ranks under collmc record; fail with collmc's counterexample instead of a timeout")


@pytest.fixture
def rank() -> int:
    """This rank's number in a collmc_distributed test (in the ranks the test runs in; 0 in pytest's own process,
    which does not run the test body)."""
    return int(os.environ.get("RANK", "0"))


@pytest.fixture
def world_size() -> int:
    """The number of ranks of a collmc_distributed test."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def _counterexample(result: collmc.Result) -> str:
    lines = [f"collmc: {result.verdict}"]
    lines += [f"  {e}" for e in result.explanations[:2]]
    for h in result.cycle:
        origin = h.location.origin if h.location is not None else ""
        lines.append(f"  rank {h.rank}: {h.call}" + (f"  at {origin}" if origin else ""))
    lines.append(result.report)
    return "\n".join(lines)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: Any) -> Any:
    marker = pyfuncitem.get_closest_marker(MARKER)
    if marker is None:
        return None
    world = int(marker.kwargs.get("world", marker.args[0] if marker.args else 2))
    backend = str(marker.kwargs.get("backend", "gloo"))
    hang_after = float(marker.kwargs.get("hang_after", 2))
    time_limit = float(marker.kwargs.get("time_limit", 120))
    open_orders = bool(marker.kwargs.get("open_orders", True))
    path = str(pyfuncitem.path if hasattr(pyfuncitem, "path") else pyfuncitem.fspath)
    with tempfile.TemporaryDirectory(prefix="collmc-pytest-") as d:
        out = os.path.join(d, "traces")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([p for p in sys.path if p]))
        cmd = [collmc.find_collmc(), "record", "--hang-after", str(hang_after), "--time-limit", str(time_limit),
               "-o", out, "--", sys.executable, "-m", "collmc.launch", str(world), "-m", "collmc.pytest_rank", path,
               pyfuncitem.originalname if hasattr(pyfuncitem, "originalname") else pyfuncitem.name, backend]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=time_limit + 30)
        output = run.stdout + run.stderr
        hung = run.returncode == 124
        if run.returncode not in (0, 124):
            pytest.fail(f"the ranks failed (exit {run.returncode}):\n{output}", pytrace=False)
        imported = collmc.import_traces(out, os.path.join(d, "test.cmc"), open_orders=open_orders)
        result = collmc.check(imported.path)
        if result.verdict not in ("safe",):
            what = "the run hung" if hung else "the run passed, but an order of its calls the program allows hangs"
            pytest.fail(f"{what}\n{_counterexample(result)}\nimport:\n{imported.summary}", pytrace=False)
        if hung:
            pytest.fail(f"the run hung, and the model finds no hang in its calls (outside what the shim records)\n"
                        f"{output}\n{imported.summary}", pytrace=False)
    return True
