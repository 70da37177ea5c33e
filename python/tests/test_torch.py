"""Real torch.distributed programs (Debian's torch 1.13, gloo, CPU), two ranks started by
tests/torch_programs/launch.py: recorded with `collmc record` (the torch shim), imported and checked; and the
precheck. Each program runs a few seconds; the hanging one is stopped by record's hang detection."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import collmc

SOURCE = Path(os.environ.get("COLLMC_SOURCE_DIR", Path(__file__).resolve().parents[2]))
PROGRAMS = SOURCE / "tests" / "torch_programs"


try:
    import torch.distributed  # noqa: F401
    HAVE_TORCH = True
except ImportError:  # Debian's python3-torch (scripts/setup.sh installs it)
    HAVE_TORCH = False


def record(out: str, program: str, *args: str, hang_after: float = 2) -> subprocess.CompletedProcess[str]:
    return subprocess.run([collmc.find_collmc(), "record", "--hang-after", str(hang_after), "--time-limit", "90", "-o",
                           out, "--", sys.executable, "-m", "collmc.launch", "2", str(PROGRAMS / program), *args],
                          capture_output=True, text=True, timeout=120, check=False)


@unittest.skipUnless(HAVE_TORCH or os.environ.get("COLLMC_REQUIRE_TORCH") == "1", "no torch (python3-torch)")
class RecordTwoGroupsTest(unittest.TestCase):
    def test_opposite_orders_hang_and_check_deadlock_naming_the_lines(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "traces")
            p = record(out, "two_groups.py", "opposite")
            self.assertEqual(p.returncode, 124, p.stderr)  # stopped by --hang-after: both ranks inside all_reduce
            self.assertIn("in all_reduce", p.stderr)
            files = sorted(Path(out).glob("collmc-trace.*.torch.jsonl"))
            self.assertEqual(len(files), 2, p.stderr)
            imp = collmc.import_traces(out, os.path.join(d, "job.cmc"))
            self.assertIn("two_groups.py:21:main", imp.summary)  # where both ranks wait
            self.assertRegex(imp.text, r"comm pg1 = \[0, 1\] uninit mpi")
            r = collmc.check(imp.path)
            self.assertEqual(r.verdict, "deadlock", r.report)
            self.assertEqual(len(r.origins()), 2)
            self.assertTrue(all("two_groups.py:21:main" in o for o in r.origins()), r.origins())
            self.assertEqual(sorted(h.comm for h in r.cycle), ["pg1", "pg2"])

    def test_one_order_completes_and_checks_safe(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "traces")
            p = record(out, "two_groups.py", "same")
            self.assertEqual(p.returncode, 0, p.stderr)
            imp = collmc.import_traces(out, os.path.join(d, "job.cmc"), full_history=True)
            r = collmc.check(imp.path)
            self.assertEqual(r.verdict, "safe", r.report)
            # The run that completed hides the order that hangs: open orders find it.
            opened = collmc.import_traces(out, os.path.join(d, "open.cmc"), open_orders=True)
            self.assertIn("any_order", opened.text)
            self.assertEqual(collmc.check(opened.path).verdict, "deadlock")

    def test_collmc_record_variable_without_collmc_record(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "traces")
            env = dict(os.environ, COLLMC_RECORD=out, PYTHONPATH=os.pathsep.join(sys.path))
            p = subprocess.run([sys.executable, "-m", "collmc.launch", "2", "-m", "collmc.record",
                                str(PROGRAMS / "two_groups.py"), "same"], capture_output=True, text=True, timeout=120,
                               env=env, check=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(list(Path(out).glob("collmc-trace.*.torch.jsonl"))), 2)
            self.assertEqual(collmc.check(collmc.import_traces(out).path).verdict, "safe")

    def test_shim_lines_pair_and_say_the_groups(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "traces")
            self.assertEqual(record(out, "two_groups.py", "same").returncode, 0)
            for f in Path(out).glob("collmc-trace.*.torch.jsonl"):
                lines = [json.loads(x) for x in f.read_text().splitlines()]
                self.assertEqual(lines[0]["ev"], "process")
                self.assertEqual(lines[0]["format"], "collmc-torch")
                self.assertTrue(all(isinstance(v, (int, str)) for x in lines for v in x.values()))  # flat
                enters = {x["seq"]: x for x in lines if x["ev"] == "enter"}
                returns = {x["seq"]: x for x in lines if x["ev"] == "return"}
                self.assertEqual(set(enters), set(returns))
                calls = [x["call"] for x in lines if x["ev"] == "enter"]
                self.assertEqual(calls, ["init_process_group", "new_group", "new_group", "all_reduce", "all_reduce",
                                         "barrier", "destroy_process_group"])
                groups = [x for x in lines if x["ev"] == "return" and x["call"] == "new_group"]
                self.assertEqual([(g["pg"], g["backend"], g["ranks"]) for g in groups],
                                 [(1, "gloo", "0,1"), (2, "gloo", "0,1")])
                self.assertTrue(all(x["src"].endswith(":main") for x in enters.values()))


@unittest.skipUnless(HAVE_TORCH or os.environ.get("COLLMC_REQUIRE_TORCH") == "1", "no torch (python3-torch)")
class PrecheckTest(unittest.TestCase):
    def run_ranks(self, mode: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        return subprocess.run([sys.executable, "-m", "collmc.launch", "2", str(PROGRAMS / "precheck_groups.py"), mode],
                              capture_output=True, text=True, timeout=120, env=env, check=False)

    def test_every_rank_raises_before_the_hang(self) -> None:
        p = self.run_ranks("opposite")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        for rank in (0, 1):
            self.assertIn(f"rank {rank}: HangPredicted", p.stdout)
        self.assertIn("precheck_groups.py:", p.stdout)
        self.assertNotIn("done", p.stdout)

    def test_one_order_passes_and_runs(self) -> None:
        p = self.run_ranks("same")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.count("done"), 2)


if __name__ == "__main__":
    unittest.main()
