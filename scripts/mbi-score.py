#!/usr/bin/env python3
"""Score collmc on the MPI Bugs Initiative (MBI, github.com/mquinson/MBI); docs/MBI.md has the table.

For every selected MBI code: generate it with MBI's own generators (once), compile it with mpicc, run it
under `collmc record --time-limit` with mpirun and the -np its header asks for, import the traces, check
the scenario, and compare the verdict with MBI's expected outcome (OK or ERROR). A code counts as reported
when `collmc check` finds a violation (exit 1); safe (exit 0) counts as "no error"; anything else (a
compile error, an import that failed, an inconclusive check) is kept apart as MBI does ("error" column).

    scripts/mbi-score.py --mbi /tmp/mbi --collmc build/cli/collmc --out /tmp/mbi-run [--sample 4] [--jobs 1]

--mbi is a checkout of mquinson/MBI (never committed here). Results are cached per code in --out, so an
interrupted run resumes; --table-only rebuilds the table from what is there. Nothing here needs the network.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

# collmc's MPI profile covers these MBI feature labels (the header's BEGIN_MPI_FEATURES block); a code is
# counted in every category whose feature it uses ("Yes"). Persistent point-to-point requests (MPI_Send_init,
# MPI_Start, ...) are recorded since issue 26; persistent collectives (MPI 4.0) are not.
CATEGORIES = [
    ("COLL", ["COLL!basic"]),
    ("iCOLL", ["COLL!nonblocking"]),
    ("P2P", ["P2P!basic", "P2P!nonblocking", "P2P!persistent"]),
    ("RMA", ["RMA"]),
    ("COM/GRP", ["COLL!tools"]),
]
UNCOVERED = {"COLL!persistent"}

# MBI's published figures (README.md of mquinson/MBI at 1bf81e6, "Latest Tools Evaluation Results";
# totals over the whole suite of that version, no per-category split).
PUBLISHED = [
    ("Aislinn", 64, 64, 16, 20, 35, 0.7619, 0.8000, 0.7805),
    ("CIVL", 13, 18, 28, 1, 139, 0.9286, 0.3171, 0.4727),
    ("ISP", 69, 70, 32, 20, 8, 0.7753, 0.6832, 0.7263),
    ("MUST", 83, 79, 10, 15, 12, 0.8469, 0.8925, 0.8691),
    ("PARCOACH", 18, 80, 8, 90, 3, 0.1667, 0.6923, 0.287),
    ("McSimGrid", 77, 76, 16, 17, 13, 0.8191, 0.8280, 0.8235),
]


def generate(mbi):
    gen = os.path.join(mbi, "gencodes")
    if glob.glob(os.path.join(gen, "*.c")):
        return gen
    os.makedirs(gen, exist_ok=True)
    for g in sorted(glob.glob(os.path.join(mbi, "scripts", "generators", "*Generator.py"))):
        subprocess.run([sys.executable, g], cwd=gen, check=True, stdout=subprocess.DEVNULL)
    return gen


def parse_header(path):
    """The code's MPI features and its tests: every `$ mpirun ...` line of the BEGIN_MBI_TESTS block with
    the outcome on the line after it (a code may hold several, e.g. `${EXE} 1` OK and `${EXE} 2` ERROR)."""
    text = open(path, encoding="utf-8", errors="replace").read()
    features = set(re.findall(r"^\s*([!A-Za-z0-9]+): Yes$", text, re.M))
    block = re.search(r"BEGIN_MBI_TESTS(.*?)END_MBI_TESTS", text, re.S)
    if not block:
        return None
    tests = []
    for m in re.finditer(r"^\s*\$ ?(mpirun[^\n]*)\n\s*\|\s*(OK|ERROR: *(\S+))", block.group(1), re.M):
        np_m = re.search(r"-np (\d+)", m.group(1))
        args = m.group(1).split("${EXE}", 1)[1].split() if "${EXE}" in m.group(1) else []
        tests.append({
            "np": int(np_m.group(1)) if np_m else 2,
            "args": args,
            "expect": "OK" if m.group(2).startswith("OK") else "ERROR",
            "detail": m.group(3) or "OK",
        })
    if not tests:
        return None
    return {"features": sorted(features), "tests": tests}


def categories_of(features):
    return [name for name, feats in CATEGORIES if any(f in features for f in feats)]


def select(gen, sample, sample_small=None):
    """Every code of a covered category; with --sample N, the codes whose name's MD5 is 0 modulo N (a fixed
    pseudo-random 1/N: MBI's names come in ok/nok pairs, so every N-th name would be biased)."""
    codes = []  # one entry per test: a code with several test lines gives NAME_0, NAME_1, ... (MBI's test ids)
    for path in sorted(glob.glob(os.path.join(gen, "*.c"))):
        h = parse_header(path)
        if h is None or UNCOVERED & set(h["features"]) or not categories_of(h["features"]):
            continue
        base = os.path.basename(path)[:-2]
        for i, t in enumerate(h["tests"]):
            name = base if len(h["tests"]) == 1 else "%s_%d" % (base, i)
            codes.append((name, path, dict(t, features=h["features"])))
    if sample <= 1 and not sample_small:
        return codes
    def rate(h):  # the collective-free codes (P2P, RMA, COM/GRP alone) are few: --sample-small for them
        big = {"COLL", "iCOLL"} & set(categories_of(h["features"]))
        return sample if big or not sample_small else sample_small
    return [c for c in codes if int(hashlib.md5(c[0].encode()).hexdigest(), 16) % rate(c[2]) == 0]


def run_one(args, name, path, h):
    res_file = os.path.join(args.out, "results", name + ".json")
    if os.path.exists(res_file):
        return json.load(open(res_file))
    work = os.path.join(args.out, "work", name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r = dict(name=name, expect=h["expect"], detail=h["detail"], np=h["np"], features=h["features"],
             categories=categories_of(h["features"]))
    start = time.time()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    mpicc = ["mpicc"]
    if args.loads_stores:  # the program's own loads and stores recorded (scripts/mpicc-loads-stores.sh)
        mpicc = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpicc-loads-stores.sh"),
                 os.path.dirname(os.path.abspath(args.collmc))]
    cc = subprocess.run(mpicc + ["-O0", "-o", os.path.join(work, name), path], capture_output=True, text=True)
    if cc.returncode != 0:
        r.update(outcome="CE", why="mpicc: " + cc.stderr[-300:])
    else:
        hang = ["--hang-after", str(args.hang_after)] if args.hang_after else []
        rec = subprocess.run([args.collmc, "record", "--out", os.path.join(work, "traces"), "--time-limit",
                              str(args.time_limit)] + hang + ["--", "mpirun", "--bind-to", "none", "-np",
                              str(h["np"]), os.path.join(work, name)] + h["args"], capture_output=True, text=True,
                             env=env)
        r["run"] = "hung" if rec.returncode == 124 else ("exit %d" % rec.returncode)
        if not os.path.isdir(os.path.join(work, "traces")) or not os.listdir(os.path.join(work, "traces")):
            r.update(outcome="RE", why="no trace written")
        else:
            imp = subprocess.run([args.collmc, "trace", "import", os.path.join(work, "traces"), "-o",
                                  os.path.join(work, name + ".cmc")], capture_output=True, text=True)
            if imp.returncode != 0:
                r.update(outcome="RE", why="import: " + (imp.stderr or imp.stdout)[-300:])
            else:
                chk = subprocess.run([args.collmc, "check", "--time-limit", str(args.check_limit), "--quiet",
                                      os.path.join(work, name + ".cmc")], capture_output=True, text=True)
                r["verdict"] = (chk.stdout.strip().split(": ")[-1].split()[0] if chk.stdout.strip() else "?")
                # Exit 4: the model says safe, but the scenario records that the run hung (`observed hung`):
                # collmc's own verdict is safe; the run's hang counts in the second total row only.
                if chk.returncode in (0, 4):
                    r["outcome"] = "TN" if h["expect"] == "OK" else "FN"
                elif chk.returncode == 1:
                    r["outcome"] = "TP" if h["expect"] == "ERROR" else "FP"
                elif chk.returncode == 3:
                    r.update(outcome="TO", why="check inconclusive")
                else:
                    r.update(outcome="RE", why="check: " + (chk.stderr or chk.stdout)[-300:])
    r["seconds"] = round(time.time() - start, 2)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    with open(res_file, "w") as f:
        json.dump(r, f)
    return r


def metrics(rows):
    c = {k: sum(1 for r in rows if r["outcome"] == k) for k in ("TP", "TN", "FP", "FN")}
    c["err"] = len(rows) - sum(c.values())
    p = c["TP"] / (c["TP"] + c["FP"]) if c["TP"] + c["FP"] else float("nan")
    rc = c["TP"] / (c["TP"] + c["FN"]) if c["TP"] + c["FN"] else float("nan")
    f1 = 2 * p * rc / (p + rc) if p == p and rc == rc and p + rc > 0 else float("nan")
    return c, p, rc, f1


def table(results, args, selected_count, elapsed):
    fmt = lambda x: "-" if x != x else "%.3f" % x
    lines = ["| category | codes | TP | TN | FP | FN | error | precision | recall | F1 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, _ in CATEGORIES:
        rows = [r for r in results if name in r["categories"]]
        c, p, rc, f1 = metrics(rows)
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %s | %s | %s |" % (
            name, len(rows), c["TP"], c["TN"], c["FP"], c["FN"], c["err"], fmt(p), fmt(rc), fmt(f1)))
    c, p, rc, f1 = metrics(results)
    lines.append("| **total** (each code once) | %d | %d | %d | %d | %d | %d | %s | %s | %s |" % (
        len(results), c["TP"], c["TN"], c["FP"], c["FN"], c["err"], fmt(p), fmt(rc), fmt(f1)))
    # The same codes, counting also what `collmc record` itself saw: a run stopped by the time limit (hung)
    # or one that exited non-zero (MPI aborted it). Not the model checker's verdict: said apart.
    def observed(r):
        r = dict(r)
        if r["outcome"] in ("TN", "FN") and r.get("run", "exit 0") != "exit 0":
            r["outcome"] = "TP" if r["expect"] == "ERROR" else "FP"
        return r
    c, p, rc, f1 = metrics([observed(r) for r in results])
    lines.append("| total, counting also a run that hung or failed under `collmc record` | %d | %d | %d | %d | %d | %d "
                 "| %s | %s | %s |" % (len(results), c["TP"], c["TN"], c["FP"], c["FN"], c["err"], fmt(p), fmt(rc),
                                       fmt(f1)))
    lines += ["", "By MBI's expected error class (all selected codes):", "",
              "| expected | codes | reported (TP or FP) | not reported (TN or FN) | error |", "|---|---|---|---|---|"]
    for d in sorted({r["detail"] for r in results}):
        rows = [r for r in results if r["detail"] == d]
        rep = sum(1 for r in rows if r["outcome"] in ("TP", "FP"))
        no = sum(1 for r in rows if r["outcome"] in ("TN", "FN"))
        lines.append("| %s | %d | %d | %d | %d |" % (d, len(rows), rep, no, len(rows) - rep - no))
    lines += ["", "MBI's published figures for the other tools (README.md of mquinson/MBI, "
              "\"Latest Tools Evaluation Results\"; totals over that version's suite):", "",
              "| tool | TP | TN | FP | FN | error | recall | precision | F1 |", "|---|---|---|---|---|---|---|---|---|"]
    for t in PUBLISHED:
        lines.append("| %s | %d | %d | %d | %d | %d | %.3f | %.3f | %.3f |" % t)
    seconds = sum(r.get("seconds", 0) for r in results)
    lines += ["", "Run: %d of the covered codes (sample: MD5 of the name = 0 mod %d, mod %s for codes in no collective category), time limit %s s per run, %s s per check, "
              "%d job(s), %.0f s of runs (the sum over codes)." % (
                  selected_count, args.sample, args.sample_small or args.sample, args.time_limit, args.check_limit,
                  args.jobs, seconds)]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mbi", required=True, help="a checkout of github.com/mquinson/MBI")
    ap.add_argument("--collmc", default="build/cli/collmc")
    ap.add_argument("--out", required=True, help="results directory (resumable)")
    ap.add_argument("--sample", type=int, default=1, help="every N-th code of each category (1: all)")
    ap.add_argument("--sample-small", type=int, help="the same for codes in no collective category")
    ap.add_argument("--time-limit", type=float, default=10, help="seconds per program run")
    ap.add_argument("--hang-after", type=float,
                    help="also stop a run once every rank has sat in a call with no trace line for S s "
                         "(collmc record --hang-after); the measured table (docs/MBI.md) used 5")
    ap.add_argument("--check-limit", type=float, default=30, help="seconds per check")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--loads-stores", action="store_true",
                    help="compile with clang's load/store callbacks and record the program's own accesses to "
                         "memory it gave MPI (scripts/mpicc-loads-stores.sh; the recorder beside --collmc)")
    ap.add_argument("--keep", action="store_true", help="keep binaries, traces and scenarios")
    ap.add_argument("--table-only", action="store_true", help="only rebuild the table from cached results")
    ap.add_argument("--only", help="a regular expression on code names")
    ap.add_argument("--category", action="append", choices=[c for c, _ in CATEGORIES],
                    help="only the codes of this category (repeatable): a category's figures without the whole suite")
    args = ap.parse_args()
    args.collmc = os.path.abspath(args.collmc)
    os.makedirs(os.path.join(args.out, "results"), exist_ok=True)
    codes = select(generate(args.mbi), args.sample, args.sample_small)
    if args.only:
        codes = [c for c in codes if re.search(args.only, c[0])]
    if args.category:
        codes = [c for c in codes if set(args.category) & set(categories_of(c[2]["features"]))]
    start = time.time()
    results = []
    if args.table_only:
        for name, _, _ in codes:
            f = os.path.join(args.out, "results", name + ".json")
            if os.path.exists(f):
                results.append(json.load(open(f)))
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(run_one, args, *c) for c in codes]
            for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
                r = fut.result()
                results.append(r)
                print("[%d/%d] %s: %s (%s, %s) %.1fs" % (i, len(codes), r["name"], r["outcome"], r.get("verdict", "-"),
                                                      r.get("run", "-"), r["seconds"]), flush=True)
    results.sort(key=lambda r: r["name"])
    text = table(results, args, len(codes), time.time() - start)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
