"""Cost of collmc.torch.check_plan at W ranks on CPU (gloo, the job's own TCPStore).

    PYTHONPATH=build/python COLLMC=build/cli/collmc /usr/bin/python3 bench/python/precheck_bench.py 2 4 8 16 32 64

For each W: W processes on this host (collmc.launch), the default group on gloo, two groups over all ranks;
each rank plans K registrations (--calls, default 2, the seed's pattern: the same order on every rank, so the
check proves `safe`), then check_plan runs R times (--repeat, default 3) after a barrier. Prints, per W, the
slowest rank's time for one check_plan (median of the repeats) and rank 0's share spent in the collmc check
(building the scenario, running the binary, parsing its JSON). Figures go to docs/PERFORMANCE.md."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def rank_main() -> None:
    from datetime import timedelta

    import torch.distributed as dist

    import collmc.torch as ct

    calls, repeat, out = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    rank, world = dist.get_rank(), dist.get_world_size()
    groups = [dist.new_group(list(range(world))) for _ in range(2)]
    times, checks = [], []
    for i in range(repeat):
        plan = ct.Plan(f"bench{i}")
        for k in range(calls):
            plan.register(groups[k % 2], buffer=f"pool{k // 2}")
        dist.barrier()
        t0 = time.perf_counter()
        if rank == 0:
            c0 = time.perf_counter()
            text = ct.scenario_of({r: json.loads(plan.to_json()) for r in range(world)}, world, "probe")
            import collmc
            collmc.check(text)
            checks.append(time.perf_counter() - c0)
            t0 = time.perf_counter()
        ct.check_plan(plan, timeout=600)
        times.append(time.perf_counter() - t0)
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump({"times": times, "checks": checks}, f)
    dist.destroy_process_group()


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--rank":
        rank_main()
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("worlds", type=int, nargs="+")
    ap.add_argument("--calls", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print(f"{'W':>5} {'check_plan (s, slowest rank, median)':>38} {'of it: collmc check on rank 0 (s)':>36}")
    for w in a.worlds:
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "collmc.launch", str(w), os.path.abspath(__file__), "--rank",
                                str(a.calls), str(a.repeat), d], check=False)
            if p.returncode != 0:
                print(f"W={w}: the ranks failed ({p.returncode})")
                return 1
            per_rank = [json.load(open(os.path.join(d, f"rank{r}.json"))) for r in range(w)]
            slowest = [max(r["times"][i] for r in per_rank) for i in range(a.repeat)]
            check = statistics.median(per_rank[0]["checks"])
            print(f"{w:>5} {statistics.median(slowest):>38.3f} {check:>36.3f}   (whole run {time.perf_counter() - t:.0f} s)",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
