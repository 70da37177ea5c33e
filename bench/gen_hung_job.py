#!/usr/bin/env python3
"""Synthetic dumps of a hung data-parallel job, for `collmc trace import` benchmarks (docs/PERFORMANCE.md).

The job: W ranks in tensor-parallel groups of 8 consecutive ranks (pg desc "tp") and data-parallel groups
across them (ranks with the same r mod 8, desc "dp"), every process group in every rank's pg_config as
torch writes it. Each training iteration is an all_reduce on the rank's tp group, then a reduce_scatter
and an all_gather on its dp group. The last rank never enters its last reduce_scatter: its dp peers wait
in it (started), their later work stays queued (scheduled); the other ranks finish that iteration and
wait in the next all_reduce, which needs a member of the stuck dp group.

  gen_hung_job.py --format json|pickle|nccl-log --world W --entries E --out DIR [--jobs N]

Flight Recorder: one dump per rank (rank_R.json / rank_R.pkl; ring buffer of E entries, version 2.10).
nccl-log: one NCCL_DEBUG=INFO log per rank with E collective lines after the comms' init lines.
Data only: the pickles hold dicts, lists, strings and ints.
"""
import argparse
import json
import multiprocessing
import os
import pickle
import sys

TP = 8


def groups(world):
    """pg name -> (desc, ranks); 0 is the default pg, then the tp groups, then the dp groups."""
    pgs = {"0": ("default_pg", list(range(world)))}
    ntp = world // TP
    for t in range(ntp):
        pgs[str(1 + t)] = ("tp", list(range(t * TP, t * TP + TP)))
    for d in range(TP):
        pgs[str(1 + ntp + d)] = ("dp", list(range(d, world, TP)))
    return pgs


def schedule(world, entries, rank):
    """(record_id, op, pg, seq, state) of the entries the rank's ring buffer holds."""
    culprit = world - 1
    stuck_dp = rank % TP == culprit % TP
    h = max(1, -(-(entries - 4) // 3))  # the iteration that hangs
    ops = []
    for i in range(h + 2):
        ops.append(("all_reduce", "tp", i + 1))
        ops.append(("reduce_scatter", "dp", 2 * i + 1))
        ops.append(("all_gather", "dp", 2 * i + 2))
    ops = ops[: 3 * h + 4]  # iteration h, then the next all_reduce
    if rank == culprit:
        ops = ops[: 3 * h + 1]  # never enters the reduce_scatter of iteration h
    out = []
    for j, (op, grp, seq) in enumerate(ops):
        if j < 3 * h + 1:
            state = "completed"
        elif stuck_dp:
            state = "started" if j == 3 * h + 1 else "scheduled"
        else:
            state = "completed" if j < 3 * h + 3 else "started"
        out.append((j, op, grp, seq, state))
    return out[-entries:]


def pg_names(world, rank):
    ntp = world // TP
    return {"tp": str(1 + rank // TP), "dp": str(1 + ntp + rank % TP)}


def dump(world, entries, rank, pgs_cfg):
    names = pg_names(world, rank)
    count = 1 << 20
    ents = []
    status = {}
    for rid, op, grp, seq, state in schedule(world, entries, rank):
        pg = names[grp]
        ents.append({
            "record_id": rid, "pg_id": int(pg), "process_group": [pg, grp],
            "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
            "profiling_name": "nccl:" + op, "time_created_ns": 1795987858622245035 + rid * 1000,
            "input_sizes": [[count]], "input_dtypes": ["BFloat16"],
            "output_sizes": [[count]], "output_dtypes": ["BFloat16"],
            "state": state, "time_discovered_started_ns": 0, "time_discovered_completed_ns": 0,
            "retired": state == "completed", "timeout_ms": 600000, "is_p2p": False,
            "thread_id": "139913800578880", "thread_name": "python3",
        })
        s = status.setdefault(pg, {"last_enqueued_collective": "-1", "last_started_collective": "-1",
                                   "last_completed_collective": "-1"})
        s["last_enqueued_collective"] = str(seq)
        if state != "scheduled":
            s["last_started_collective"] = str(seq)
        if state == "completed":
            s["last_completed_collective"] = str(seq)
    return {"version": "2.10", "comm_lib_version": "2.27.3", "pg_config": pgs_cfg, "pg_status": status,
            "nccl_comm_state": {}, "entries": ents}


def nccl_log(world, entries, rank):
    names = pg_names(world, rank)
    host, pid = "node%d" % (rank // TP), 1000 + rank
    pre = "%s:%d:%d [%d] NCCL INFO " % (host, pid, pid, rank % TP)
    lines = [pre + "NCCL version 2.27.3+cuda12.9"]
    ntp = world // TP
    comms = {"world": (0x7f2000000000 + rank, rank, world, 0x1),
             "tp": (0x7f0000000000 + rank, rank % TP, TP, 0x1000 + rank // TP),
             "dp": (0x7f1000000000 + rank, rank // TP, ntp, 0x9000 + rank % TP)}
    for grp in ("world", "tp", "dp"):
        ptr, crank, n, cid = comms[grp]
        lines.append(pre + "ncclCommInitRankConfig comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId 1000 "
                     "commId 0x%x - Init START" % (ptr, crank, n, rank % TP, rank % TP, cid))
        lines.append(pre + "ncclCommInitRankConfig comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId 1000 "
                     "commId 0x%x - Init COMPLETE" % (ptr, crank, n, rank % TP, rank % TP, cid))
    opname = {"all_reduce": "AllReduce", "reduce_scatter": "ReduceScatter", "all_gather": "AllGather"}
    for rid, op, grp, seq, state in schedule(world, entries, rank):
        ptr, crank, n, cid = comms[grp]
        lines.append(pre + "%s: opCount %x sendbuff 0x7e0000000000 recvbuff 0x7e0000100000 count 1048576 "
                     "datatype 9 op 0 root 0 comm 0x%x [nranks=%d] stream 0x5a0000" %
                     (opname[op], seq - 1, ptr, n))
    return "\n".join(lines) + "\n"


def write_rank(args):
    fmt, world, entries, out, rank = args
    if fmt == "nccl-log":
        with open(os.path.join(out, "nccl.%d.log" % rank), "w") as f:
            f.write(nccl_log(world, entries, rank))
        return
    cfg = _CFG[0]
    d = dump(world, entries, rank, cfg)
    if fmt == "json":
        with open(os.path.join(out, "rank_%d.json" % rank), "w") as f:
            json.dump(d, f, separators=(",", ":"))
    else:
        with open(os.path.join(out, "rank_%d.pkl" % rank), "wb") as f:
            pickle.dump(d, f, protocol=4)


_CFG = [None]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", choices=["json", "pickle", "nccl-log"], default="json")
    p.add_argument("--world", type=int, default=1024)
    p.add_argument("--entries", type=int, default=400)
    p.add_argument("--out", required=True)
    p.add_argument("--jobs", type=int, default=1)
    a = p.parse_args()
    if a.world < 2 * TP or a.world % TP:
        sys.exit("--world must be a multiple of %d, at least %d" % (TP, 2 * TP))
    if a.entries < 8:
        sys.exit("--entries must be at least 8")
    os.makedirs(a.out, exist_ok=True)
    _CFG[0] = {name: {"name": name, "desc": desc, "ranks": "[" + ", ".join(map(str, ranks)) + "]"}
               for name, (desc, ranks) in groups(a.world).items()}
    work = [(a.format, a.world, a.entries, a.out, r) for r in range(a.world)]
    if a.jobs > 1:
        with multiprocessing.Pool(a.jobs) as pool:
            for _ in pool.imap_unordered(write_rank, work, chunksize=16):
                pass
    else:
        for w in work:
            write_rank(w)


if __name__ == "__main__":
    main()
