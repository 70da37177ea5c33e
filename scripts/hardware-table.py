#!/usr/bin/env python3
"""Joins the replay tables of two machines into docs/HARDWARE.md's one table.

Usage: scripts/hardware-table.py TWO_GPU_TABLES.md ONE_GPU_TABLES.md > table.md
Each input holds `collmc replay --calibrate --table` tables (several may follow each other). The
output has one row per scenario of the one-GPU run: scenario | model | 2 GPUs, NCCL 2.28.3 |
1 shared GPU, NCCL 2.30.7 | agree | hang declared after the last block (s), and the closing counts.
A REFUSED row was not run: it counts neither way.
"""
import re
import sys


def rows(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6 or cells[0] in ("scenario", "") or set(cells[0]) <= set("-"):
            continue
        out[cells[0]] = cells
    return out


def main():
    two = rows(sys.argv[1])
    one = rows(sys.argv[2])
    print("| scenario | model | 2 GPUs, NCCL 2.28.3 | 1 shared GPU, NCCL 2.30.7 | agree | hang declared (s) |")
    print("|---|---|---|---|---|---|")
    agree = disagree = refused = 0
    for name, c in one.items():
        outcome = re.sub(r" \(shared GPU: .*\)$", "", c[2])
        ok = c[3].startswith("yes")
        if outcome == "REFUSED":
            refused += 1
            verdict = "not run"
        elif ok:
            agree += 1
            verdict = c[3]
        else:
            disagree += 1
            verdict = "**no**"
        two_gpu = two[name][2] if name in two else "not run"
        hang = c[6].split("/")[0].strip() if len(c) > 6 and c[6] else ""
        print(f"| {name} | {c[1]} | {two_gpu} | {outcome} | {verdict} | {hang} |")
    total = agree + disagree
    print()
    print(f"{total} replayed on the shared GPU: {agree} agree, {disagree} disagree "
          f"({100.0 * agree / total:.1f}%); {refused} refused (not run)")


main()
