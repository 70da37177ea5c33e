"""The seed's pattern for the torch shim on one shared GPU (docs/HARDWARE.md, "The torch shim on one GPU"):
two process groups over both ranks, a plain torch.cuda.MemPool (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True),
register_mem_pool(pool, symm=True) on both groups: "same" (g1 then g2 on both ranks: completes) or "opposite"
(rank 1 registers g2 first: both ranks hang in register_mem_pool); "plain" is "same" run with
expandable_segments:False (the pool's memory plain cudaMalloc segments, which a window does not take). Two ranks on GPU 0 need NCCL >= 2.30 and
NCCL_MULTI_RANK_GPU_ENABLE=1. Started by `python -m collmc.launch 2 shim_mempool.py MODE` under collmc record."""
import os
import sys
import time

import torch
import torch.distributed as dist


def main() -> None:
    mode = sys.argv[1]
    rank = int(os.environ["RANK"])
    device = torch.device("cuda", 0)  # both ranks share the one GPU
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    g1 = dist.new_group([0, 1])
    g2 = dist.new_group([0, 1])
    x = torch.ones(1024, device=device)
    for g in (dist.group.WORLD, g1, g2):
        dist.all_reduce(x, group=g)
    torch.cuda.synchronize()
    backends = {"g1": g1._get_backend(device), "g2": g2._get_backend(device)}
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        buf = torch.empty(4 << 20, device=device)
    order = ["g1", "g2"] if mode in ("same", "plain") or rank == 0 else ["g2", "g1"]
    for name in order:
        print(f"[rank {rank}] {time.strftime('%H:%M:%S')} register_mem_pool on {name}", flush=True)
        backends[name].register_mem_pool(pool, symm=True)
    for name in order:
        backends[name].deregister_mem_pool(pool)
    del buf
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"[rank {rank}] done", flush=True)


if __name__ == "__main__":
    main()
