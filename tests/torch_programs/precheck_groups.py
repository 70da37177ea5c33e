"""The two-group program of two_groups.py with a precheck: each rank plans its two all_reduces, collmc checks
the plans of all ranks (through the job's c10d store) before any rank makes a call. "opposite": every rank raises
collmc.HangPredicted (exit 3, the cycle printed) instead of hanging; "same": the calls are made (exit 0)."""
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

import collmc
import collmc.torch


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "same"
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    g1 = dist.new_group(list(range(world)))
    g2 = dist.new_group(list(range(world)))
    order = (g1, g2) if mode == "same" or rank % 2 == 0 else (g2, g1)
    try:
        with collmc.torch.precheck("two groups") as plan:
            for g in order:
                plan.all_reduce(g)
    except collmc.HangPredicted as e:
        print(f"rank {rank}: HangPredicted: {e}", flush=True)
        return 3
    x = torch.ones(4)
    for g in order:
        dist.all_reduce(x, group=g)
    print(f"rank {rank}: done {x.tolist()}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
