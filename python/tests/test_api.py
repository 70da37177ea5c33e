"""collmc's Python API against the collmc binary ($COLLMC, or the one built with the package)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import collmc
import collmc.torch as ct
from collmc.result import compact_result, parse_result

SOURCE = Path(os.environ.get("COLLMC_SOURCE_DIR", Path(__file__).resolve().parents[2]))


class CheckTest(unittest.TestCase):
    def test_deadlock_of_an_example_as_objects(self) -> None:
        r = collmc.check(SOURCE / "examples" / "reg_cross_order.cmc")
        self.assertEqual(r.verdict, "deadlock")
        self.assertEqual(r.exit_code, 1)
        self.assertEqual([h.rank for h in r.cycle], [0, 1])
        self.assertEqual([h.call for h in r.cycle], ["register A wa", "register B wb"])
        self.assertEqual([h.comm for h in r.cycle], ["A", "B"])
        self.assertEqual(r.cycle[0].location.line, 25)
        self.assertEqual({p.rank for p in r.positions if not p.finished}, {0, 1})
        self.assertEqual(r.schedule[-1].rank, 1)
        self.assertIn("wait-for cycle", r.report)

    def test_scenario_text_and_safe(self) -> None:
        text = (SOURCE / "examples" / "nonblocking_fix.cmc").read_text()
        r = collmc.check(text)
        self.assertEqual(r.verdict, "safe")
        self.assertTrue(r.safe)
        self.assertEqual(r.cycle, [])

    def test_bad_input_raises_with_the_place(self) -> None:
        with self.assertRaises(collmc.CollmcInputError) as e:
            collmc.check("ranks 2\nrank 0 {\n  frobnicate A\n}\n")
        self.assertEqual(e.exception.exit_code, 2)
        self.assertRegex(str(e.exception), r":3:\d+")

    def test_origin_comments_become_sources(self) -> None:
        text = ("ranks 2\ncomm A = [0, 1] mpi\ncomm B = [0, 1] mpi\n"
                "rank 0 {\n  all_reduce A buf  # prog.py:10:main\n  all_reduce B buf  # prog.py:11:main\n}\n"
                "rank 1 {\n  all_reduce B buf  # prog.py:11:main\n  all_reduce A buf  # prog.py:10:main\n}\n")
        r = collmc.check(text)
        self.assertEqual(r.verdict, "deadlock")
        self.assertEqual(sorted(r.origins()), ["prog.py:10:main", "prog.py:11:main"])

    def test_python_m_collmc_is_the_cli(self) -> None:
        p = subprocess.run([sys.executable, "-m", "collmc", "check", str(SOURCE / "examples" / "reg_cross_order.cmc")],
                           capture_output=True, text=True, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("deadlock", p.stdout)
        self.assertIn("wait-for cycle", p.stdout)

    def test_pip_install_offline(self) -> None:
        if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
            self.skipTest("no pip for this interpreter")
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "src"
            subprocess.run(["cp", "-r", str(SOURCE / "python"), str(src)], check=True)
            p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                                "--target", str(Path(d) / "site"), str(src)], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertTrue((Path(d) / "site" / "collmc" / "record" / "_boot" / "sitecustomize.py").is_file())
            env = dict(os.environ, PYTHONPATH=str(Path(d) / "site"))
            q = subprocess.run([sys.executable, "-c", "import collmc, sys; print(collmc.__file__, "
                                "collmc.check(sys.argv[1]).verdict)", str(SOURCE / "examples" / "reg_cross_order.cmc")],
                               capture_output=True, text=True, env=env)
            self.assertEqual(q.returncode, 0, q.stderr)
            self.assertIn(str(Path(d) / "site"), q.stdout)
            self.assertTrue(q.stdout.strip().endswith("deadlock"), q.stdout)

    def test_gen_megatron(self) -> None:
        text = collmc.gen.megatron(16, tp=2, cp=2, ep=4, dist_opt_instances=2, order="per-rank",
                                   late_segments="all")
        self.assertIn("ranks 16", text)
        self.assertEqual(collmc.check(text).verdict, "deadlock")
        sorted_text = collmc.gen.megatron(16, tp=2, cp=2, ep=4, dist_opt_instances=2, order="sorted",
                                          late_segments="all")
        self.assertEqual(collmc.check(sorted_text).verdict, "safe")


class MegatronTest(unittest.TestCase):
    def gen(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([collmc.find_collmc(), "gen", "megatron", *args, "-o", "-"], capture_output=True,
                              text=True, check=False)

    def test_megatron_argument_names_and_a_pasted_launch_line(self) -> None:
        ours = self.gen("--world", "16", "--tp", "2", "--cp", "2", "--ep", "4", "--dist-opt-instances", "2")
        theirs = self.gen("--world", "16", "--tensor-model-parallel-size", "2", "--context-parallel-size", "2",
                          "--expert-model-parallel-size", "4", "--num-distributed-optimizer-instances", "2")
        line = ("torchrun --nproc-per-node 8 --nnodes 2 pretrain_gpt.py --tensor-model-parallel-size 2 "
                "--context-parallel-size=2 --expert_model_parallel_size 4 --num-distributed-optimizer-instances 2 "
                "--use-megatron-fsdp --micro-batch-size 1 --bf16")
        pasted = self.gen("--megatron-args", line)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        self.assertEqual(ours.stdout, theirs.stdout)
        self.assertEqual(ours.stdout, pasted.stdout, pasted.stderr)
        self.assertIn("ignored 3 flags", pasted.stderr)
        self.assertIn("--use-megatron-fsdp", pasted.stderr)
        self.assertEqual(collmc.gen.megatron(megatron_args=line.split()), pasted.stdout)
        clash = self.gen("--tp", "2", "--tensor-model-parallel-size", "4")
        self.assertEqual(clash.returncode, 2)
        self.assertIn("disagree", clash.stderr)

    def test_groups_the_job_built(self) -> None:
        # Flight Recorder dumps (JSON) of a 4-rank job whose pg_config names Megatron-LM's groups.
        groups = {"0": ("default_pg", [0, 1, 2, 3]), "1": ("INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP", [0, 1]),
                  "2": ("INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP", [2, 3]), "3": ("EXPERT_DATA_PARALLEL_GROUP", [0, 2]),
                  "4": ("EXPERT_DATA_PARALLEL_GROUP", [1, 3])}
        with tempfile.TemporaryDirectory() as d:
            for r in range(4):
                mine = {k: {"name": k, "desc": v[0], "ranks": str(v[1])} for k, v in groups.items() if r in v[1]}
                dump = {"version": "2.10", "rank": r, "pg_config": mine, "pg_status": {}, "entries": []}
                Path(d, f"fr_{r}.json").write_text(json.dumps(dump))
            hang = self.gen("--groups-from", d, "--order", "per-rank")
            self.assertEqual(hang.returncode, 0, hang.stderr)
            self.assertIn("comm intra_dp_cp = {[0, 1], [2, 3]}", hang.stdout)
            self.assertIn("comm hier_edp_l0 = {[0, 2], [1, 3]}", hang.stdout)
            self.assertIn("ranks 4", hang.stdout)
            self.assertEqual(collmc.check(hang.stdout).verdict, "deadlock")
            self.assertEqual(collmc.check(self.gen("--groups-from", d, "--order", "sorted").stdout).verdict, "safe")


class TorchShimReaderTest(unittest.TestCase):
    """The reader of the torch shim's files, with the NCCL recorder's files of the same processes: the two-H200
    fixture mempool_opposite_order (register_mem_pool on two groups in opposite orders, hung), with shim lines
    made for it whose torch calls enclose the NCCL calls they made, as the shim writes them."""

    def shim_for(self, nccl: Path, out: Path, descs: list[str]) -> None:
        lines = [json.loads(x) for x in nccl.read_text().splitlines()]
        proc = lines[0]
        enters = [x for x in lines if x["ev"] == "enter"]
        returns = {x["seq"]: x for x in lines if x["ev"] == "return"}
        rank = proc["env_rank"]
        shim = [dict(proc, format="collmc-torch", torch="2.11.0")]
        seq = 0

        def call(name: str, nccl_call: dict, ret: dict | None, fields: dict, ret_fields: dict) -> None:
            nonlocal seq
            seq += 1
            shim.append({"ev": "enter", "seq": seq, "tid": nccl_call["tid"], "t_mono_ns": nccl_call["t_mono_ns"] - 10,
                         "t_wall_ns": nccl_call["t_wall_ns"] - 10, "call": name, "src": f"train.py:{10 + seq}:main",
                         **fields})
            if ret is not None:
                shim.append({"ev": "return", "seq": seq, "tid": ret["tid"], "t_mono_ns": ret["t_mono_ns"] + 10,
                             "t_wall_ns": ret["t_wall_ns"] + 10, "call": name, "result": 0, **ret_fields})

        group = {"member": 1, "backend": "nccl", "ranks": "0,1", "size": 2}
        init = next(e for e in enters if e["call"] == "ncclCommInitRankConfig")
        call("init_process_group", init, returns[init["seq"]], {"backend": "nccl"},
             {"pg": 0, "name": "0", "desc": "default_pg", **group, "rank": rank, "world_size": 2})
        for i, split in enumerate(e for e in enters if e["call"] == "ncclCommSplit"):
            call("new_group", split, returns[split["seq"]], {"ranks": "0,1"},
                 {"pg": i + 1, "name": str(i + 1), "desc": descs[i], **group})
        for reg in (e for e in enters if e["call"] == "ncclCommWindowRegister"):
            pg = 1 if reg["comm"] == next(e for e in lines if e.get("call") == "ncclCommSplit" and
                                          e["ev"] == "return")["newcomm"] else 2
            call("register_mem_pool", reg, returns.get(reg["seq"]), {"pg": pg, "pool": 1, "symm": 1}, {})
        out.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in shim))

    def test_nccl_calls_named_after_the_torch_groups_and_lines(self) -> None:
        fixture = SOURCE / "tests" / "fixtures" / "traces" / "gpu" / "mempool_opposite_order" / "recorder"
        with tempfile.TemporaryDirectory() as d:
            for f in sorted(fixture.glob("collmc-trace.*.jsonl")):
                (Path(d) / f.name).write_text(f.read_text())
                self.shim_for(f, Path(d) / f.name.replace(".jsonl", ".torch.jsonl"), ["DENSE_GROUP", "EXPERT_GROUP"])
            imp = collmc.import_traces(d, os.path.join(d, "job.cmc"))
            self.assertIn("comm DENSE_GROUP = [0, 1] uninit", imp.text)
            self.assertIn("comm EXPERT_GROUP = [0, 1] uninit", imp.text)
            self.assertRegex(imp.text, r"register (DENSE|EXPERT)_GROUP buf_d662000000 symmetric  # train.py:\d+:main "
                                       r"\(register_mem_pool; ")
            r = collmc.check(imp.path)
            self.assertEqual(r.verdict, "deadlock", r.report)
            self.assertEqual(sorted(h.comm for h in r.cycle), ["DENSE_GROUP", "EXPERT_GROUP"])
            self.assertTrue(all(o.startswith("train.py:") for o in r.origins()), r.origins())

    def test_bad_shim_line_is_an_input_error_with_its_place(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            Path(d, "collmc-trace.h.1.torch.jsonl").write_text(
                '{"ev":"process","format":"collmc-torch","version":1,"pid":1,"host":"h"}\n'
                '{"ev":"enter","seq":1,"call":"all_reduce"}\n')
            with self.assertRaises(collmc.CollmcInputError) as e:
                collmc.import_traces(d)
            self.assertIn("collmc-trace.h.1.torch.jsonl:2:", str(e.exception))


class PrecheckScenarioTest(unittest.TestCase):
    def plans(self, order1: list[str]) -> dict[int, list[dict[str, object]]]:
        def call(g: str, src: str) -> dict[str, object]:
            return {"op": "register", "group": f"{g}:0,1", "ranks": "0:1:1", "backend": "nccl", "label": g,
                    "buffer": "pool", "source": src}
        return {0: [call("g1", "a.py:1:f"), call("g2", "a.py:2:f")],
                1: [call(g, f"a.py:{3 + i}:f") for i, g in enumerate(order1)]}

    def test_opposite_orders_deadlock_with_sources(self) -> None:
        r = collmc.check(ct.scenario_of(self.plans(["g2", "g1"]), 2, "pools"))
        self.assertEqual(r.verdict, "deadlock")
        self.assertEqual(sorted(r.origins()), ["a.py:1:f", "a.py:3:f"])

    def test_what_every_rank_fetches_stays_small(self) -> None:
        # W = 256: every rank registers on its pair group and on a world group; rank 255 in the other order.
        world = 256
        plans: dict[int, list[dict[str, object]]] = {}
        for r in range(world):
            pair = {"op": "register", "group": f"p{r // 2}", "ranks": [r - r % 2, r - r % 2 + 1], "backend": "nccl",
                    "label": f"pair{r // 2}", "buffer": "pool", "source": f"a.py:1:f"}
            everyone = {"op": "register", "group": "w", "ranks": list(range(world)), "backend": "nccl", "label": "w",
                        "buffer": "pool", "source": "a.py:2:f"}
            plans[r] = [everyone, pair] if r == world - 1 else [pair, everyone]
        text = ct.scenario_of(plans, world, "pools")
        full = collmc.check(text)
        self.assertEqual(full.verdict, "deadlock")
        small = compact_result(full.json, text)
        self.assertLess(len(json.dumps(small)), len(json.dumps(full.json)) / 10)
        r = parse_result(small["json"], exit_code=1, origins={int(k): v for k, v in small["origins"].items()})
        self.assertEqual([(h.rank, h.call, h.comm) for h in r.cycle], [(h.rank, h.call, h.comm) for h in full.cycle])
        self.assertEqual(r.origins(), full.origins())

    def test_one_order_is_safe(self) -> None:
        self.assertEqual(collmc.check(ct.scenario_of(self.plans(["g1", "g2"]), 2, "pools")).verdict, "safe")


if __name__ == "__main__":
    unittest.main()


class ShimPoolSegmentsTest(unittest.TestCase):
    """What the torch shim writes of a pool's memory at register_mem_pool: one ADDRESS/SIZE/KIND item a segment of
    the pool's snapshot (the segments ProcessGroupNCCL registers), the kind from is_expandable, "custom" for a pool
    with its own allocator, nothing when torch cannot say."""

    class Pool:
        def __init__(self, segments: object, allocator: object = None) -> None:
            self._segments, self.allocator = segments, allocator

        def snapshot(self, include_traces: bool = True) -> object:
            self.traces_asked = include_traces
            if isinstance(self._segments, Exception):
                raise self._segments
            return self._segments

    def test_kinds_of_segments(self) -> None:
        from collmc.record import torch_shim as shim
        seg = {"address": 0x10004000000, "total_size": 20971520, "is_expandable": True}
        plain = {"address": 0x7f0000000000, "total_size": 2097152, "is_expandable": False}
        pool = self.Pool([seg, plain])
        self.assertEqual(shim._segment_fields(pool),
                         {"segments": "0x10004000000/20971520/vmm,0x7f0000000000/2097152/malloc"})
        self.assertFalse(pool.traces_asked)
        self.assertEqual(shim._segment_fields(self.Pool([seg], allocator=object())),
                         {"segments": "0x10004000000/20971520/custom"})
        many = shim._segment_fields(self.Pool([plain] * 70))
        self.assertEqual(many["segments"].count(","), 63)
        self.assertEqual(many["segments_left_out"], 6)
        self.assertEqual(shim._segment_fields(self.Pool(RuntimeError("no snapshot"))), {})
        self.assertEqual(shim._segment_fields(self.Pool([{"address": "x"}])), {})
        self.assertEqual(shim._segment_fields(None), {})
