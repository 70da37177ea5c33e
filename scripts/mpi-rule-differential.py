#!/usr/bin/env python3
"""Differential of MPI usage rules before and after they moved from the import into the semantics.

Issue 32 item 3 moves the MPI usage rules out of the MPI trace reader, which wrote `mpi_error RULE "..."`
statements, into the checker, which judges the statements themselves. This script writes random MPI recorder
traces (docs/TRACES.md, "MPI recorder format") of one family of calls, imports and checks each with two collmc
binaries (one from before a move, one after), and compares what they say: the verdict, the rank of the
violation and the MPI rule it names.

    scripts/mpi-rule-differential.py --family epochs --before OLD/collmc --after NEW/collmc --cases 10000

Families: `epochs`, one-sided calls and their epochs (rma_epoch, MPI 4.1 sec. 12.5: moved in 1ca0a1a);
`requests`, nonblocking and persistent operations and their completions (request_not_completed, MPI 4.1 sec.
3.7.3, 11.2.2: `mpi_finalize` inside the group of what is not waited for).

Exit 0 when every case agrees, 1 when one does not (the first ones are printed), 2 on bad arguments.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile

# The calls a rank makes between MPI_Win_create and MPI_Win_free, with the weights they are drawn by.
TARGETED = ["MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Rput", "MPI_Fetch_and_op", "MPI_Win_lock", "MPI_Win_unlock",
            "MPI_Win_flush", "MPI_Win_flush_local"]
UNTARGETED = ["MPI_Win_lock_all", "MPI_Win_unlock_all", "MPI_Win_flush_all", "MPI_Win_flush_local_all",
              "MPI_Win_start", "MPI_Win_complete", "MPI_Win_post", "MPI_Win_wait", "MPI_Win_test"]


class Process:
    """One process's trace in the recorder's format: a header, MPI_Init, then calls entered and returned."""

    def __init__(self, rank: int, size: int) -> None:
        self.rank = rank
        self.lines: list[str] = [json.dumps({
            "ev": "process", "format": "collmc-mpi-recorder", "version": 1, "pid": 100 + rank, "ppid": 1,
            "host": "h", "exe": "/bin/x", "t_mono_ns": 1, "t_wall_ns": 2, "env_rank": -1, "env_local_rank": -1,
            "env_world_size": -1})]
        self.seq = 0
        self.call("MPI_Init", {}, {"world_rank": rank, "world_size": size, "world": "0x10", "self": "0x20",
                                   "comm_null": "0x30", "tag_ub": 32767})

    def call(self, name: str, enter: dict[str, object], ret: dict[str, object] | None = None,
             returns: bool = True) -> None:
        self.seq += 1
        t = 10 * self.seq  # one host's clock: the processes' calls interleave by it
        self.lines.append(json.dumps({"ev": "enter", "seq": self.seq, "tid": 1, "t_mono_ns": t, "t_wall_ns": t,
                                      "call": name, **enter}))
        if returns:
            self.lines.append(json.dumps({"ev": "return", "seq": self.seq, "tid": 1, "t_mono_ns": t + 1,
                                          "t_wall_ns": t + 1, "call": name, "result": 0, **(ret or {})}))


def transfer(rng: random.Random, name: str, target: int) -> tuple[str, dict[str, object]]:
    fields: dict[str, object] = {"win": "0x40", "target": target, "count": 1, "dtype": "MPI_INT",
                                 "target_dtype": "MPI_INT", "buf": "0x%x" % (0x9000 + 16 * rng.randrange(4)),
                                 "bytes": 4, "target_disp": rng.randrange(4), "target_bytes": 4}
    if name == "MPI_Fetch_and_op":
        fields.update({"op": "sum", "result_buf": "0xa000", "result_bytes": 4})
    return name, fields


def epoch(rng: random.Random, rank: int, size: int, fence_open: bool) -> list[tuple[str, dict[str, object]]]:
    """One well-formed stretch of calls: a passive-target, start/complete, post/wait or fence epoch's calls."""
    win: dict[str, object] = {"win": "0x40"}
    kind = rng.choice(["lock", "lock", "lock_all", "start", "post", "fence"])
    out: list[tuple[str, dict[str, object]]] = []
    target = rng.randrange(size)
    def transfers(to: int, n: int) -> None:
        for _ in range(n):
            out.append(transfer(rng, rng.choice(["MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Fetch_and_op"]), to))
    if kind == "lock":
        out.append(("MPI_Win_lock", {**win, "target": target, "lock": rng.choice(["exclusive", "shared"])}))
        transfers(target, rng.randint(0, 2))
        if rng.random() < 0.4:
            out.append((rng.choice(["MPI_Win_flush", "MPI_Win_flush_local"]), {**win, "target": target}))
        out.append(("MPI_Win_unlock", {**win, "target": target}))
    elif kind == "lock_all":
        out.append(("MPI_Win_lock_all", {**win, "assert": 0}))
        transfers(target, rng.randint(0, 2))
        if rng.random() < 0.4:
            out.append((rng.choice(["MPI_Win_flush_all", "MPI_Win_flush_local_all", "MPI_Win_flush"]),
                        {**win, "target": target}))
        out.append(("MPI_Win_unlock_all", win))
    elif kind == "start":
        group = ",".join(str(x) for x in range(size) if x != rank)
        out.append(("MPI_Win_start", {**win, "assert": 0, "group": group}))
        transfers(target, rng.randint(0, 2))
        out.append(("MPI_Win_complete", win))
    elif kind == "post":
        group = ",".join(str(x) for x in range(size) if x != rank)
        out.append(("MPI_Win_post", {**win, "assert": 0, "group": group}))
        out.append((rng.choice(["MPI_Win_wait", "MPI_Win_wait", "MPI_Win_test"]), win))
    elif fence_open:
        transfers(target, rng.randint(1, 2))
    return out


def epochs_case(rng: random.Random) -> list[Process]:
    size = rng.choice([2, 2, 3])
    # The fences: every rank makes the same number, with the same NOSUCCEED assertions (a fence count that
    # differs is a mismatch both versions find alike, and would hide the epochs).
    fences = [rng.random() < 0.3 for _ in range(rng.randint(0, 3))]
    procs = []
    for r in range(size):
        p = Process(r, size)
        p.call("MPI_Win_create", {"comm": "0x10", "base": "0x1000", "size": 64, "disp_unit": 4}, {"win": "0x40"})
        calls: list[tuple[str, dict[str, object]]] = []
        fence_open = False
        for s in range(len(fences) + 1):
            for _ in range(rng.randint(0, 3)):
                calls.extend(epoch(rng, r, size, fence_open))
            if s < len(fences):
                calls.append(("MPI_Win_fence", {"win": "0x40", "assert": 0, "nosucceed": int(fences[s])}))
                fence_open = not fences[s]
        # A mistake, in one rank of two: a call left out, made twice, moved, or one more call anywhere
        # (never a fence: their count stays the same on every rank).
        if calls and rng.random() < 0.5:
            i = rng.randrange(len(calls))
            what = rng.choice(["drop", "twice", "move", "extra"])
            if calls[i][0] == "MPI_Win_fence":
                what = "extra"
            if what == "drop":
                del calls[i]
            elif what == "twice":
                calls.insert(i, calls[i])
            elif what == "move":
                c = calls.pop(i)
                calls.insert(rng.randrange(len(calls) + 1), c)
            else:
                name = rng.choice(TARGETED + UNTARGETED)
                target = rng.randrange(size)
                if name in TARGETED[:5]:
                    # A transfer to MPI_PROC_NULL, rarely: no transfer, judged by neither version. (A lock,
                    # unlock or flush of MPI_PROC_NULL is no statement now, and so judged by nothing: the
                    # one intended difference, docs/SEMANTICS_NOTES.md "MPI usage errors".)
                    target = target if rng.random() < 0.9 else -2
                    calls.insert(i, transfer(rng, name, target))
                else:
                    fields: dict[str, object] = {"win": "0x40", "target": target, "assert": 0,
                                                 "lock": rng.choice(["exclusive", "shared"]),
                                                 "group": ",".join(str(x) for x in range(size) if x != r)}
                    calls.insert(i, (name, fields))
        for name, fields in calls:
            ret: dict[str, object] = {}
            if name == "MPI_Win_test":
                ret["flag"] = rng.randint(0, 1)
            if name == "MPI_Rput":
                ret["req"] = "0x%x" % (0x70 + p.seq)
            p.call(name, fields, ret)
            if name == "MPI_Rput":
                p.call("MPI_Wait", {"req": ret["req"]})
        p.call("MPI_Win_free", {"win": "0x40"})
        p.call("MPI_Finalize", {})
        procs.append(p)
    return procs


def requests_case(rng: random.Random) -> list[Process]:
    """Rounds every rank takes part in (a ring exchange of MPI_Isend/MPI_Irecv, an MPI_Iallreduce, persistent
    requests started, an MPI_Rput in a lock_all epoch), each completed by a wait, a test that succeeded, a
    Waitall, Waitany or Waitsome, or a free; in one rank of two, one mistake: a completion left out, a test that
    found nothing, a free in place of a wait, a Waitall whose list was cut, no MPI_Finalize, a last call that
    never returned."""
    size = rng.choice([2, 2, 3])
    rounds = [rng.choice(["ring", "ring", "coll", "persistent", "rput"]) for _ in range(rng.randint(1, 3))]
    procs = []
    for r in range(size):
        p = Process(r, size)
        handles = iter(range(0x100, 0x1000))
        calls: list[tuple[str, dict[str, object], dict[str, object]]] = []
        completions: list[int] = []  # indices in calls of a completion
        def complete(reqs: list[str], freeable: bool) -> None:
            how = rng.choice(["wait", "waitall", "test", "waitany", "waitsome"] + (["free"] if freeable else []))
            if how == "waitall" or (how in ("waitany", "waitsome") and len(reqs) == 1):
                completions.append(len(calls))
                calls.append(("MPI_Waitall", {"n": len(reqs), "reqs": ",".join(reqs)}, {}))
                return
            if how == "waitsome":
                completions.append(len(calls))
                calls.append(("MPI_Waitsome", {"n": len(reqs), "reqs": ",".join(reqs)},
                              {"indices": ",".join(str(k) for k in range(len(reqs)))}))
                return
            if how == "waitany":
                for k in range(len(reqs)):
                    completions.append(len(calls))
                    left = ",".join(h if j >= k else "0x0" for j, h in enumerate(reqs))
                    calls.append(("MPI_Waitany", {"n": len(reqs), "reqs": left}, {"index": k}))
                return
            for h in reqs:
                completions.append(len(calls))
                if how == "wait":
                    calls.append(("MPI_Wait", {"req": h}, {}))
                elif how == "test":
                    calls.append(("MPI_Test", {"req": h}, {"flag": 1}))
                else:
                    calls.append(("MPI_Request_free", {"req": h}, {}))
        win = any(x == "rput" for x in rounds)
        if win:
            calls.append(("MPI_Win_create", {"comm": "0x10", "base": "0x1000", "size": 64, "disp_unit": 4},
                          {"win": "0x40"}))
        for k, kind in enumerate(rounds):
            msg = {"comm": "0x10", "count": 1, "dtype": "MPI_INT", "bytes": 4}
            if kind == "ring":
                s, v = "0x%x" % next(handles), "0x%x" % next(handles)
                calls.append(("MPI_Irecv", {**msg, "peer": (r - 1) % size, "tag": k, "buf": "0x2000"},
                              {"req": v}))
                calls.append(("MPI_Isend", {**msg, "peer": (r + 1) % size, "tag": k, "buf": "0x3000"},
                              {"req": s}))
                complete([v, s] if rng.random() < 0.5 else [s, v], True)
            elif kind == "coll":
                h = "0x%x" % next(handles)
                calls.append(("MPI_Iallreduce", {**msg, "op": "sum"}, {"req": h}))
                complete([h], False)
            elif kind == "persistent":
                s, v = "0x%x" % next(handles), "0x%x" % next(handles)
                calls.append(("MPI_Send_init", {**msg, "peer": (r + 1) % size, "tag": 9, "buf": "0x4000"}, {"req": s}))
                calls.append(("MPI_Recv_init", {**msg, "peer": (r - 1) % size, "tag": 9, "buf": "0x5000"}, {"req": v}))
                calls.append(("MPI_Startall", {"n": 2, "reqs": s + "," + v}, {}))
                completions.append(len(calls))
                calls.append(("MPI_Waitall", {"n": 2, "reqs": s + "," + v}, {}))
                calls.append(("MPI_Request_free", {"req": s}, {}))
                calls.append(("MPI_Request_free", {"req": v}, {}))
            else:
                h = "0x%x" % next(handles)
                calls.append(("MPI_Win_lock_all", {"win": "0x40", "assert": 0}, {}))
                calls.append(transfer(rng, "MPI_Rput", (r + 1) % size) + ({"req": h},))
                complete([h], False)
                calls.append(("MPI_Win_unlock_all", {"win": "0x40"}, {}))
        if win:
            calls.append(("MPI_Win_free", {"win": "0x40"}, {}))
        finalize = True
        returns_last = True
        if rng.random() < 0.5:
            what = rng.choice(["drop", "drop", "untested", "freed", "cut", "no_finalize", "last_open"])
            at = rng.choice(completions) if completions else -1
            name, enter, ret = calls[at] if at >= 0 else ("", {}, {})
            if what == "drop" and at >= 0:
                del calls[at]
            elif what == "untested" and at >= 0 and name == "MPI_Test":
                calls[at] = (name, enter, {"flag": 0})
            elif what == "freed" and at >= 0 and name == "MPI_Wait":
                calls[at] = ("MPI_Request_free", enter, {})
            elif what == "cut" and at >= 0 and name == "MPI_Waitall" and "," in str(enter["reqs"]):
                calls[at] = (name, {"n": enter["n"], "reqs": str(enter["reqs"]).split(",")[0] + ",..."}, ret)
            elif what == "no_finalize":
                finalize = False
            elif what == "last_open":
                returns_last = False
        for k, (name, enter, ret) in enumerate(calls):
            last = k == len(calls) - 1 and not finalize
            p.call(name, enter, ret, returns=returns_last or not last)
        if finalize:
            p.call("MPI_Finalize", {}, {}, returns=returns_last)
        procs.append(p)
    return procs


Outcome = tuple[str, int, str, int]


def outcome(collmc: str, traces: str, scenario: str) -> Outcome:
    """(verdict, violation's rank or -1, MPI rule or "", the check's exit status) of importing and checking one
    case."""
    imp = subprocess.run([collmc, "trace", "import", traces, "-o", scenario], capture_output=True, text=True)
    if imp.returncode != 0:
        return ("import failed: " + imp.stderr.strip()[-200:], -1, "", imp.returncode)
    chk = subprocess.run([collmc, "check", "--json", "-", scenario], capture_output=True, text=True)
    try:
        j = json.loads(chk.stdout)
    except json.JSONDecodeError:
        return ("check failed: " + chk.stderr.strip()[-200:], -1, "", chk.returncode)
    v = j.get("violation") or {}
    return (j.get("verdict", "?"), int(v.get("rank", -1)), str(v.get("mpi_rule", "")), chk.returncode)


def run_case(args: argparse.Namespace, k: int) -> tuple[int, Outcome, Outcome, str]:
    rng = random.Random(args.seed * 1_000_003 + k)
    procs = FAMILIES[args.family](rng)
    with tempfile.TemporaryDirectory(prefix="collmc-rule-diff-") as d:
        traces = os.path.join(d, "traces")
        os.makedirs(traces)
        for p in procs:
            with open(os.path.join(traces, "rank%d.jsonl" % p.rank), "w") as f:
                f.write("\n".join(p.lines) + "\n")
        before = outcome(args.before, traces, os.path.join(d, "before.cmc"))
        after = outcome(args.after, traces, os.path.join(d, "after.cmc"))
        text = ""
        if before != after:
            text = "\n".join("--- rank %d\n%s" % (p.rank, "\n".join(p.lines)) for p in procs)
    return k, before, after, text


FAMILIES = {"epochs": epochs_case, "requests": requests_case}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="collmc from before the move (the import judged the rule)")
    ap.add_argument("--after", required=True, help="collmc from after it (the semantics judges it)")
    ap.add_argument("--family", choices=sorted(FAMILIES), default="epochs", help="which calls the traces make")
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--show", action="store_true", help="print the first disagreeing case's traces")
    args = ap.parse_args()
    if args.cases < 1 or args.jobs < 1:
        print("mpi-rule-differential: --cases and --jobs are at least 1", file=sys.stderr)
        return 2
    tally: dict[tuple[str, str, int], int] = {}
    disagree = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for k, before, after, text in pool.map(lambda k: run_case(args, k), range(args.cases)):
            key = (before[0], before[2], before[3])
            tally[key] = tally.get(key, 0) + 1
            if before != after:
                disagree.append((k, before, after, text))
    print("cases: %d, disagreements: %d" % (args.cases, len(disagree)))
    for (verdict, rule, status), n in sorted(tally.items(), key=lambda x: -x[1]):
        print("  %-14s %-22s exit %d %6d" % (verdict, rule or "-", status, n))
    for k, before, after, _ in disagree[:20]:
        print("case %d: before %s, after %s" % (k, before, after))
    if disagree and args.show:
        print(disagree[0][3])
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
