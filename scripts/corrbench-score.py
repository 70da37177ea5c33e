#!/usr/bin/env python3
"""Score collmc on MPI-CorrBench (github.com/tudasc/MPI-Corrbench); docs/MBI.md has the table.

MPI-CorrBench labels its codes by folder: every `.c` under a `correct/` folder of micro-benches/0-level is
a correct MPI program (202 from the MPICH test suite, 44 MPI+OpenMP codes); the other folders hold one
error each. This script compiles each selected code as CorrBench's own tool runners do (mpicc -g -fopenmp
with one of CorrBench's cflags_list lines), runs it with `mpirun -n 2` (CorrBench's rank count) under
`collmc record`, imports the traces and checks the scenario. A correct code counts as a false positive when
`collmc check` exits 1 (a violation); exit 0 or 4 (safe) is a true negative. The error codes are scored the
same way with `--errors` (TP/FN); the table says what was run.

    scripts/corrbench-score.py --corrbench /tmp/corrbench --collmc build/cli/collmc --out /tmp/cb-run [--jobs 2]

It scores RMARaceBench (github.com/RWTH-HPC/RMARaceBench) the same way with `--rmaracebench DIR` instead: its
MPI RMA codes (MPIRMA/<kind>/NNN-MPI-...-{yes,no}.c) carry their label in a comment (RACE_KIND "none": race-free,
else a race) and their rank count (NPROCS); every code is run, the racy ones scored TP/FN. Its races are mostly
between a transfer and the program's own loads and stores: run it with --loads-stores.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

CFLAGS = ["-DNUM_THREADS=2", "-DBUFFER_LENGTH_INT=10"]  # CorrBench's cflags_list, one line of it


def select(root, errors):
    base = os.path.join(root, "micro-benches", "0-level")
    codes = []
    for d, _, files in os.walk(base):
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            rel = os.path.relpath(os.path.join(d, f), base)
            correct = "/correct/" in "/" + rel
            if correct or errors:
                codes.append((rel[:-2].replace("/", "__"), os.path.join(d, f), "OK" if correct else "ERROR"))
    return sorted(codes)


def select_rmaracebench(root: str) -> list[tuple[str, str, str, int]]:
    """RMARaceBench's MPI RMA codes: (name, path, OK or ERROR, ranks), from each code's label comment."""
    codes = []
    base = os.path.join(root, "MPIRMA")
    for d, _, files in os.walk(base):
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            path = os.path.join(d, f)
            text = open(path, encoding="utf-8", errors="replace").read()
            kind = re.search(r'"RACE_KIND":\s*"([^"]*)"', text)
            nprocs = re.search(r'"NPROCS":\s*(\d+)', text)
            if not kind or not nprocs:
                raise SystemExit("%s: no RACE_KIND/NPROCS label" % path)
            rel = os.path.relpath(path, base)[:-2].replace("/", "__")
            codes.append(("rmarace__" + rel, path, "OK" if kind.group(1) == "none" else "ERROR",
                          int(nprocs.group(1))))
    return sorted(codes)


def run_one(args, name, path, expect, np=None):
    res_file = os.path.join(args.out, "results", name + ".json")
    if os.path.exists(res_file):
        return json.load(open(res_file))
    work = os.path.join(args.out, "work", name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r = dict(name=name, expect=expect)
    start = time.time()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="2")
    exe = os.path.join(work, "a.out")
    includes = []
    if args.corrbench:
        base = os.path.join(args.corrbench, "micro-benches", "0-level")
        includes = ["-I" + os.path.join(base, "correct", "include"), "-I" + os.path.join(base, "openmp")]
    mpicc = ["mpicc"]
    if args.loads_stores:  # the program's own loads and stores recorded (scripts/mpicc-loads-stores.sh)
        mpicc = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpicc-loads-stores.sh"),
                 os.path.dirname(os.path.abspath(args.collmc))]
    cc = subprocess.run(mpicc + ["-g", "-fopenmp"] + CFLAGS + includes + ["-o", exe, path, "-lm"],
                        capture_output=True, text=True)
    if cc.returncode != 0:
        r.update(outcome="CE", why="mpicc: " + cc.stderr[-300:])
    else:
        traces = os.path.join(work, "traces")
        # --openmp-runtime: a gcc build runs on LLVM's libomp, whose OMPT interface records the threads'
        # synchronization (docs/TRACES.md, "OpenMP threads"); without it collmc record preloads the installed
        # libomp itself (the program links gcc's libgomp, which records none); "none": gcc's libgomp as it is.
        runtime = ["--openmp-runtime", args.openmp_runtime] if args.openmp_runtime else []
        rec = subprocess.run([args.collmc, "record", "--out", traces, "--time-limit", str(args.time_limit),
                              "--hang-after", str(args.hang_after)] + runtime +
                             ["--", "mpirun", "--bind-to", "none", "-n", str(np or args.np), exe],
                             capture_output=True, text=True, env=env)
        r["run"] = "hung" if rec.returncode == 124 else ("exit %d" % rec.returncode)
        if not os.path.isdir(traces) or not os.listdir(traces):
            r.update(outcome="RE", why="no trace written")
        else:
            scen = os.path.join(work, name + ".cmc")
            imp = subprocess.run([args.collmc, "trace", "import", traces, "-o", scen], capture_output=True, text=True)
            r["import"] = imp.stdout[-2000:]
            if imp.returncode != 0:
                r.update(outcome="RE", why="import: " + (imp.stderr or imp.stdout)[-300:])
            else:
                chk = subprocess.run([args.collmc, "check", "--time-limit", str(args.check_limit), scen],
                                     capture_output=True, text=True)
                first = [ln for ln in chk.stdout.splitlines() if ln.startswith(scen + ": ")]
                r["verdict"] = first[0].split(": ", 1)[1] if first else "?"
                r["check"] = chk.stdout[:1500]
                if chk.returncode in (0, 4):
                    r["outcome"] = "TN" if expect == "OK" else "FN"
                elif chk.returncode == 1:
                    r["outcome"] = "TP" if expect == "ERROR" else "FP"
                elif chk.returncode == 3:
                    r.update(outcome="TO", why="check inconclusive")
                else:
                    r.update(outcome="RE", why="check: " + (chk.stderr or chk.stdout)[-300:])
    r["seconds"] = round(time.time() - start, 2)
    if not args.keep and r.get("outcome") in ("TN", "TP"):
        shutil.rmtree(work, ignore_errors=True)
    with open(res_file, "w") as f:
        json.dump(r, f)
    return r


def table(results):
    groups = {}
    for r in results:  # by folder: correct/<kind> (MPICH), openmp correct, or an error folder
        parts = r["name"].split("__")
        label = "/".join(parts[:2]) if parts[0] in ("correct", "rmarace") else parts[0]
        if parts[0] != "correct":
            label += " (correct)" if r["expect"] == "OK" else " (errors)"
        groups.setdefault(label, []).append(r)
    lines = ["| codes | n | TN | FP | TP | FN | compile/run error | precision on the correct codes |",
             "|---|---|---|---|---|---|---|---|"]

    def row(label, rows):
        c = {k: sum(1 for r in rows if r["outcome"] == k) for k in ("TN", "FP", "TP", "FN")}
        other = len(rows) - sum(c.values())
        judged = c["TN"] + c["FP"]
        spec = "%.3f" % (c["TN"] / judged) if judged else "-"
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %s |" % (label, len(rows), c["TN"], c["FP"], c["TP"],
                                                                    c["FN"], other, spec))
    for g in sorted(groups):
        row(g, groups[g])
    row("**all correct codes**", [r for r in results if r["expect"] == "OK"])
    if any(r["expect"] == "ERROR" for r in results):
        row("**all error codes**", [r for r in results if r["expect"] == "ERROR"])
    fps = [r for r in results if r["outcome"] == "FP"]
    lines.append("")
    lines.append("False positives (%d):" % len(fps))
    for r in fps:
        lines.append("- `%s`: %s" % (r["name"], r.get("verdict", "?")[:200]))
    others = [r for r in results if r["outcome"] not in ("TN", "FP", "TP", "FN")]
    if others:
        lines.append("")
        lines.append("Not scored (%d):" % len(others))
        for r in others:
            lines.append("- `%s`: %s %s" % (r["name"], r["outcome"], r.get("why", "")[:160].replace("\n", " ")))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    suite = ap.add_mutually_exclusive_group(required=True)
    suite.add_argument("--corrbench", help="a checkout of MPI-Corrbench (micro-benches/0-level)")
    suite.add_argument("--rmaracebench", help="a checkout of RMARaceBench (MPIRMA/)")
    ap.add_argument("--collmc", default="build/cli/collmc")
    ap.add_argument("--out", required=True)
    ap.add_argument("--np", type=int, default=2, help="ranks per run (CorrBench runs its tools with 2)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--loads-stores", action="store_true",
                    help="compile with clang's load/store callbacks and record the program's own accesses to "
                         "memory it gave MPI (scripts/mpicc-loads-stores.sh; the recorder beside --collmc)")
    ap.add_argument("--openmp-runtime", metavar="LIB",
                    help="LLVM's libomp.so.5 for `collmc record --openmp-runtime` (gcc builds: the OpenMP threads' "
                         "synchronization recorded through OMPT; without it collmc record preloads the installed "
                         "one itself), or none: the threads of a gcc build as one body per process")
    ap.add_argument("--time-limit", type=float, default=20)
    ap.add_argument("--hang-after", type=float, default=5)
    ap.add_argument("--check-limit", type=float, default=30)
    ap.add_argument("--errors", action="store_true", help="also run the error codes (TP/FN)")
    ap.add_argument("--only", action="append", default=[], help="run only codes whose name contains this")
    ap.add_argument("--keep", action="store_true", help="keep every work directory (FP and errors are kept)")
    ap.add_argument("--table-only", action="store_true")
    args = ap.parse_args()
    args.collmc = os.path.abspath(args.collmc)
    os.makedirs(os.path.join(args.out, "results"), exist_ok=True)
    codes = select_rmaracebench(args.rmaracebench) if args.rmaracebench else select(args.corrbench, args.errors)
    if args.only:
        codes = [c for c in codes if any(o in c[0] for o in args.only)]
    start = time.time()
    if args.table_only:
        results = [json.load(open(os.path.join(args.out, "results", c[0] + ".json"))) for c in codes
                   if os.path.exists(os.path.join(args.out, "results", c[0] + ".json"))]
    else:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda c: run_one(args, *c), codes))
    print(table(results))
    print("\nRun: %d codes, -n %d, %s, %d job(s), %.0f s of wall time." % (
        len(results), args.np, " ".join(CFLAGS), args.jobs, time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
