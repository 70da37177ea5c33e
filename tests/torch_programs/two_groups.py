"""Two gloo process groups over the same ranks, all_reduced in the same order on every rank ("same": completes)
or in opposite orders on even and odd ranks ("opposite": every rank waits in its first all_reduce for a peer
that waits in the other group: a hang). Started by launch.py (RANK, WORLD_SIZE, MASTER_ADDR/PORT)."""
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "same"
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    g1 = dist.new_group(list(range(world)))
    g2 = dist.new_group(list(range(world)))
    calls = [(torch.ones(4), g1), (torch.ones(4), g2)]  # one tensor per group: the calls share no data
    if mode == "opposite" and rank % 2 == 1:
        calls.reverse()
    for x, g in calls:
        dist.all_reduce(x, group=g)  # the line every rank waits in
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
