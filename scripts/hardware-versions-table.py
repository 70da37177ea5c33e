#!/usr/bin/env python3
"""Joins the replay tables of two NCCL releases on one machine into docs/HARDWARE.md's table (issue 36).

Usage: scripts/hardware-versions-table.py COLLMC OLD_VERSION OLD_TABLES.md NEW_VERSION NEW_TABLES.md
       [SCENARIO=WHY ...] > table.md      (a difference decided, and why: printed in its agree cell)
Each TABLES file holds `collmc replay --calibrate --table` tables (several may follow each other), replayed
with the scenario's own `set nccl_version` line removed, so the replay's model is the loaded release's.
The model columns are computed here: `collmc check --quiet` of each scenario file (found by name under
tests/calibration*, tests/calibration-probes) with `set nccl_version = VERSION` in place of its own.
Output: scenario | model OLD | 1 shared GPU, OLD | model NEW | 1 shared GPU, NEW | agree (NEW), then the
counts. Agreement is decided here from what the hardware did (completed, hang, a wrong split, an error),
not from the replay's own column (its model may be another release's). A REFUSED or missing row was not
run: it counts neither way.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile


def rows(path: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or cells[0] in ("scenario", "") or set(cells[0]) <= set("-"):
            continue
        out[cells[0]] = cells
    return out


def scenario_files() -> dict[str, str]:
    files: dict[str, str] = {}
    for path in sorted(glob.glob("tests/calibration*/*.cmc")):
        text = open(path, encoding="utf-8").read()
        m = re.search(r'^name "([^"]*)"', text, re.M)
        files[m.group(1) if m else os.path.basename(path)[:-4]] = path
        files.setdefault(os.path.basename(path)[:-4], path)
    return files


def model_verdict(collmc: str, path: str, version: str) -> str:
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"^set nccl_version = .*\n", "", text, flags=re.M)
    text = re.sub(r"^(ranks \d+\n)", r"\1set nccl_version = " + version + "\n", text, count=1, flags=re.M)
    with tempfile.NamedTemporaryFile("w", suffix=".cmc", delete=False) as f:
        f.write(text)
        name = f.name
    try:
        out = subprocess.run([collmc, "check", name, "--quiet"], capture_output=True, text=True, check=False).stdout
    finally:
        os.unlink(name)
    m = re.search(r": (\w+)", out)
    return m.group(1) if m else "?"


def outcome(cells: list[str] | None) -> str:
    if cells is None:
        return "not run"
    return re.sub(r" \(shared GPU: .*\)$", "", cells[2])


def happened(cells: list[str] | None) -> str:
    """What the hardware did, whatever model the replay compared it with: completed, hang, wrong, error."""
    if cells is None or outcome(cells) in ("REFUSED", "ERROR", "not run"):
        return "not run"
    did = cells[4]
    if did.startswith("every rank completed"):
        return "completed"
    if did.startswith("hang"):
        return "hang"
    if did.startswith("completed, but"):
        return "wrong"
    return "error"


# What each verdict of the model predicts the hardware does.
EXPECTED = {
    "safe": {"completed"},
    "deadlock": {"hang"},
    "divergent_kernel": {"hang"},
    "mismatch": {"hang", "wrong", "error"},
    "usage_error": {"error"},
    "use_after_deregister": {"error"},
    "use_after_free": {"error"},
}


def main() -> None:
    collmc, old_version, old_path, new_version, new_path = sys.argv[1:6]
    explained = dict(arg.split("=", 1) for arg in sys.argv[6:])  # SCENARIO=why: a difference decided
    old, new = rows(old_path), rows(new_path)
    files = scenario_files()
    print(f"| scenario | model {old_version} | 1 shared GPU, {old_version} | model {new_version} | "
          f"1 shared GPU, {new_version} | agree ({new_version}) |")
    print("|---|---|---|---|---|---|")
    agree = disagree = not_run = decided = 0
    for name in sorted(new):  # the rows the new release replayed
        path = files.get(name)
        m_old = model_verdict(collmc, path, old_version) if path else "?"
        m_new = model_verdict(collmc, path, new_version) if path else "?"
        did = happened(new.get(name))
        if did == "not run":
            not_run += 1
            verdict = "not run"
        elif did in EXPECTED.get(m_new, set()):
            agree += 1
            verdict = "yes"
        elif name in explained:
            decided += 1
            verdict = "explained: " + explained[name]
        else:
            disagree += 1
            verdict = "**no**"
        changed = " (changed)" if m_old != m_new else ""
        # What each release did (the replay's own labels compare with the model it ran, not with this one).
        o_old = happened(old.get(name))
        o_new = did if did != "not run" else outcome(new.get(name))
        print(f"| {name} | {m_old} | {o_old} | {m_new}{changed} | {o_new} | {verdict} |")
    run = agree + disagree + decided
    print(f"\n{new_version}: {run} replayed, {agree} agree ({100.0 * agree / max(run, 1):.1f}%), {decided} differ "
          f"and are explained, {disagree} disagree unexplained, {not_run} not run")


if __name__ == "__main__":
    main()
