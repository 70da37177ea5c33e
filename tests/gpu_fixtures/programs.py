"""Small PyTorch programs for collmc's trace fixtures: two processes, one GPU each, two process groups.

Run one rank with:  RANK=r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=p python3 programs.py PROGRAM OUTDIR
(scripts/gpu-record-fixtures.sh starts both ranks, with the recorder, Flight Recorder and NCCL logs on.)

PROGRAM:
  mempool_same_order      register_mem_pool(pool, symm=True) on g1 then g2 on both ranks (completes)
  mempool_opposite_order  g1 then g2 on rank 0, g2 then g1 on rank 1 (hangs inside the registrations)
  skipped_collective      rank 1 skips the second all-reduce on g1 and all-reduces on g2 (hangs in collectives)
  pool_order_by_free_memory         the registration order comes from each rank's free GPU memory (in
                                    4 GiB buckets: even -> g1 first, odd -> g2 first); the ranks happen to
                                    agree (completes)
  pool_order_by_free_memory_skewed  the same program, rank 1 holding 4 GiB more first: its bucket moves by
                                    one, its order flips (hangs inside the registrations)

A hang is the expected outcome of the last two; the launcher kills them after a fixed time.
"""
import os
import sys
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist

COLLECTIVE_TIMEOUT_S = 15  # short, so the watchdog times out and Flight Recorder dumps within the run


def log(msg):
    print(f"[rank {os.environ.get('RANK')}] {time.strftime('%H:%M:%S')} {msg}", flush=True)


def dump_flight_recorder(outdir, tag):
    """Writes this rank's Flight Recorder buffer now, as pickle and as JSON (both formats torch offers)."""
    rank = dist.get_rank()
    fr_dir = os.path.join(outdir, "flight_recorder")
    os.makedirs(fr_dir, exist_ok=True)
    c10d = torch._C._distributed_c10d
    try:
        data = c10d._dump_nccl_trace(includeCollectives=True, includeStackTraces=False, onlyActive=False)
        with open(os.path.join(fr_dir, f"{tag}_{rank}.pkl"), "wb") as f:
            f.write(data)
    except Exception as e:  # the API differs between versions; say so and go on
        log(f"pickle dump failed: {e!r}")
    try:
        data = c10d._dump_nccl_trace_json(includeCollectives=True, onlyActive=False)
        with open(os.path.join(fr_dir, f"{tag}_{rank}.json"), "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
    except Exception as e:
        log(f"json dump failed: {e!r}")


def dump_later(outdir, seconds):
    """A daemon thread that dumps Flight Recorder after `seconds` (it runs only if the hung call released the GIL)."""

    def run():
        time.sleep(seconds)
        log("still running: dumping Flight Recorder from a watchdog thread")
        dump_flight_recorder(outdir, "fr_watchdog")

    threading.Thread(target=run, daemon=True).start()


def setup():
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    timeout = timedelta(seconds=COLLECTIVE_TIMEOUT_S)
    # device_id: the default group's communicator is created now (ncclCommInitRankConfig), and new_group
    # splits it eagerly (ncclCommSplit), so every communicator exists before the interesting part.
    dist.init_process_group("nccl", device_id=device, timeout=timeout)
    g1 = dist.new_group([0, 1], timeout=timeout)
    g2 = dist.new_group([0, 1], timeout=timeout)
    warm = torch.ones(1024, device=device)
    for g in (dist.group.WORLD, g1, g2):
        dist.all_reduce(warm, group=g)
    torch.cuda.synchronize()
    log("communicators ready")
    return rank, device, g1, g2


def mempool(outdir, opposite):
    rank, device, g1, g2 = setup()
    backends = {"g1": g1._get_backend(device), "g2": g2._get_backend(device)}
    pool = torch.cuda.MemPool(backends["g1"].mem_allocator)  # segments from ncclMemAlloc
    with torch.cuda.use_mem_pool(pool):
        buf = torch.ones(1 << 20, dtype=torch.bfloat16, device=device)
    order = ["g1", "g2"]
    if opposite and rank == 1:
        order.reverse()
    dump_flight_recorder(outdir, "fr_before_register")
    dump_later(outdir, 20)
    for name in order:
        log(f"register_mem_pool(pool, symm=True) on {name}")
        backends[name].register_mem_pool(pool, symm=True)
    log("registered on both groups")
    dist.all_reduce(buf, group=g1)
    dist.all_reduce(buf, group=g2)
    torch.cuda.synchronize()
    for name in order:
        backends[name].deregister_mem_pool(pool)
    del buf
    dump_flight_recorder(outdir, "fr_end")
    dist.destroy_process_group()
    log("done")


def pool_order_by_free_memory(outdir, skewed):
    """A registration order that depends on per-rank state: a pool registered on the group its rank
    considers "roomier" first. Nothing makes the ranks agree; on identical GPUs they usually do."""
    rank, device, g1, g2 = setup()
    held = None
    if skewed and rank == 1:
        held = torch.empty(1 << 32, dtype=torch.uint8, device=device)  # 4 GiB: one bucket less free
    backends = {"g1": g1._get_backend(device), "g2": g2._get_backend(device)}
    pool = torch.cuda.MemPool(backends["g1"].mem_allocator)
    with torch.cuda.use_mem_pool(pool):
        buf = torch.ones(1 << 20, dtype=torch.bfloat16, device=device)
    free, _ = torch.cuda.mem_get_info(device)
    bucket = free >> 32
    order = ["g2", "g1"] if bucket % 2 else ["g1", "g2"]
    log(f"free {free} bytes, bucket {bucket}: registering on {order[0]} first")
    dump_later(outdir, 20)
    for name in order:
        backends[name].register_mem_pool(pool, symm=True)
    log("registered on both groups")
    dist.all_reduce(buf, group=g1)
    dist.all_reduce(buf, group=g2)
    torch.cuda.synchronize()
    for name in order:
        backends[name].deregister_mem_pool(pool)
    del buf, held
    dump_flight_recorder(outdir, "fr_end")
    dist.destroy_process_group()
    log("done")


def skipped_collective(outdir):
    rank, device, g1, g2 = setup()
    x = torch.ones(1 << 16, device=device)
    dist.all_reduce(x, group=g1)
    if rank == 0:
        log("all_reduce #2 on g1")
        dist.all_reduce(x, group=g1)
    else:
        log("skipping all_reduce #2 on g1; all_reduce on g2")
        dist.all_reduce(x, group=g2)
    dump_later(outdir, 25)
    torch.cuda.synchronize()  # never returns on either rank: the watchdog times out and dumps
    log("synchronized (unexpected)")
    dump_flight_recorder(outdir, "fr_end")
    dist.destroy_process_group()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    program, outdir = sys.argv[1], sys.argv[2]
    if program == "mempool_same_order":
        mempool(outdir, opposite=False)
    elif program == "mempool_opposite_order":
        mempool(outdir, opposite=True)
    elif program == "skipped_collective":
        skipped_collective(outdir)
    elif program == "pool_order_by_free_memory":
        pool_order_by_free_memory(outdir, skewed=False)
    elif program == "pool_order_by_free_memory_skewed":
        pool_order_by_free_memory(outdir, skewed=True)
    else:
        sys.exit(f"unknown program {program!r}\n{__doc__}")


if __name__ == "__main__":
    main()
