"""One rank of a test marked `collmc_distributed` (collmc.pytest): imports the test file, joins the default
process group (the marker's backend, gloo by default), calls the test function, leaves the group.
    python -m collmc.pytest_rank FILE FUNCTION BACKEND
Started WORLD times by collmc.launch under `collmc record` (RANK, WORLD_SIZE, MASTER_ADDR/PORT set)."""
from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import traceback


def main() -> int:
    path, function, backend = sys.argv[1], sys.argv[2], sys.argv[3]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("collmc_distributed_test", path)
    if spec is None or spec.loader is None:
        print(f"collmc.pytest_rank: cannot import {path}", file=sys.stderr)
        return 2
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    test = getattr(module, function)
    import torch.distributed as dist
    if backend != "none":
        dist.init_process_group(backend)
    kwargs = {}
    params = inspect.signature(test).parameters
    if "rank" in params:
        kwargs["rank"] = int(os.environ["RANK"])
    if "world_size" in params:
        kwargs["world_size"] = int(os.environ["WORLD_SIZE"])
    try:
        test(**kwargs)
    except Exception:
        traceback.print_exc()
        return 1
    if backend != "none" and dist.is_initialized():
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
