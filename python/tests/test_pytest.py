"""The pytest plugin (collmc.pytest) on tests/torch_programs/test_dist_example.py: a hanging test fails with the
counterexample (not a timeout), a safe one passes; and `collmc test --junit`."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

import collmc

SOURCE = Path(os.environ.get("COLLMC_SOURCE_DIR", Path(__file__).resolve().parents[2]))


class PytestPluginTest(unittest.TestCase):
    def test_hang_fails_with_the_counterexample(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            junit = os.path.join(d, "junit.xml")
            p = subprocess.run([sys.executable, "-m", "pytest", "-p", "collmc.pytest", "-q", "-p", "no:cacheprovider",
                                f"--junitxml={junit}", str(SOURCE / "tests" / "torch_programs" /
                                                           "test_dist_example.py")],
                               capture_output=True, text=True, timeout=240, check=False, cwd=d)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
            self.assertEqual(set(cases), {"test_same_order", "test_opposite_orders",
                                          "test_same_order_other_orders_opened"})
            self.assertIsNone(cases["test_same_order"].find("failure"))
            failure = cases["test_opposite_orders"].find("failure")
            self.assertIsNotNone(failure)
            text = (failure.get("message") or "") + (failure.text or "")
            self.assertIn("the run hung", text)
            self.assertIn("collmc: deadlock", text)
            self.assertIn("test_dist_example.py:12:two_groups", text)
            opened = cases["test_same_order_other_orders_opened"].find("failure")
            self.assertIsNotNone(opened)
            self.assertIn("an order of its calls the program allows hangs", (opened.get("message") or "") +
                          (opened.text or ""))


class JunitTest(unittest.TestCase):
    def test_collmc_test_junit(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            good = Path(d) / "good.cmc"
            bad = Path(d) / "wrong.cmc"
            text = (SOURCE / "examples" / "reg_cross_order.cmc").read_text()
            good.write_text(text)
            bad.write_text(text.replace("expect deadlock", "expect safe"))
            junit = Path(d) / "out.xml"
            p = subprocess.run([collmc.find_collmc(), "test", d, "--junit", str(junit)], capture_output=True,
                               text=True, check=False)
            self.assertEqual(p.returncode, 1, p.stderr)
            root = ET.parse(junit).getroot()
            suite = root if root.tag == "testsuite" else root.find("testsuite")
            self.assertEqual(suite.get("tests"), "2")
            self.assertEqual(suite.get("failures"), "1")
            cases = {c.get("name"): c for c in suite.iter("testcase")}
            self.assertIsNone(cases[str(good)].find("failure"))
            self.assertIn("deadlock", cases[str(bad)].find("failure").get("message"))


if __name__ == "__main__":
    unittest.main()
