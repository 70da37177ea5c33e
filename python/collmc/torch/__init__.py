"""Precheck: before a phase of host-blocking calls (buffer registration over several groups, a round of
collectives whose order each rank decides), every rank says what it is about to call; one rank checks the
union with collmc; every rank gets the same answer before any of them blocks, and raises
collmc.HangPredicted when the calls can hang.

    import collmc.torch
    with collmc.torch.precheck("register pools") as plan:
        for name in my_order:                      # decided per rank: a dict, the allocator, free memory
            plan.register(groups[name])            # the call about to be made, with its source line
    for name in my_order:                          # reached only if no order of these calls can hang
        backends[name].register_mem_pool(pool, symm=True)

The plans travel through the job's own c10d store (the default group's, or `store=`); the check runs the collmc
binary on one rank (rank 0 of the default group). Standard library only; torch is imported from the program.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from collmc import HangPredicted, Result, check
from collmc.record.torch_shim import describe_group, group_ranks
from collmc.result import compact_result, parse_result

__all__ = ["Plan", "PlannedCall", "precheck", "check_plan", "scenario_of", "HangPredicted"]

# Calls a plan may hold: the scenario statement each becomes (LANGUAGE.md).
_OPS = {"register": "register", "deregister": "deregister", "all_reduce": "all_reduce", "broadcast": "broadcast",
        "all_gather": "all_gather", "reduce_scatter": "reduce_scatter", "all_to_all": "all_to_all",
        "barrier": "barrier", "new_group": "init", "init": "init", "destroy": "destroy"}


@dataclass
class PlannedCall:
    op: str
    group: str  # the group's key: its PyTorch name and a hash of its ranks, the same on every member
    ranks: Any  # its global ranks ("first:last:step" when they are one, else a list)

    backend: str
    label: str
    buffer: str = ""
    source: str = ""


def _torch_dist() -> Any:
    d = sys.modules.get("torch.distributed")
    if d is None:
        import torch.distributed as d  # noqa: PLC0415 (the program uses torch already)
    return d


def _source() -> str:
    f = sys._getframe(2)
    here = os.path.dirname(os.path.abspath(__file__))
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(here + os.sep):
        f = f.f_back
    if f is None:
        return "?"
    return f"{f.f_code.co_filename}:{f.f_lineno}:{f.f_code.co_name}"


def _group_identity(group: Any) -> tuple[str, list[int], str, str]:
    """(key, ranks, backend, label) of a process group, alike on every member."""
    d = _torch_dist()
    if group is None:
        group = d.group.WORLD
    ranks = list(range(d.get_world_size())) if group is d.group.WORLD else group_ranks(group)
    name, desc, backend = describe_group(group)
    label = desc if desc and desc != "undefined" else ("default_pg" if name == "0" else f"pg{name}")
    digest = hashlib.sha1(",".join(map(str, ranks)).encode()).hexdigest()[:16]
    return f"{name}#{digest}", ranks, backend, label


def _ranks_text(ranks: list[int]) -> Any:
    """A group's ranks as the plan carries them: "first:last:step" for a progression (a world group of 16k ranks
    is a few bytes, not 100 KB on every rank), else the list."""
    if len(ranks) >= 2 and all(ranks[i + 1] - ranks[i] == ranks[1] - ranks[0] > 0 for i in range(len(ranks) - 1)):
        return f"{ranks[0]}:{ranks[-1]}:{ranks[1] - ranks[0]}"
    return list(ranks)


def _ranks_of(text: Any) -> list[int]:
    if isinstance(text, str):
        first, last, step = (int(x) for x in text.split(":"))
        return list(range(first, last + 1, step))
    return [int(r) for r in text]


@dataclass
class Plan:
    """The host-blocking calls one rank is about to make in a phase, in its order."""
    phase: str = "phase"
    calls: list[PlannedCall] = field(default_factory=list)

    def add(self, op: str, group: Any = None, *, buffer: str = "", source: Optional[str] = None) -> "Plan":
        if op not in _OPS:
            raise ValueError(f"precheck: unknown call '{op}' (expected one of {', '.join(sorted(_OPS))})")
        key, ranks, backend, label = _group_identity(group)
        self.calls.append(PlannedCall(op, key, _ranks_text(ranks), backend, label, buffer, source or _source()))
        return self

    def register(self, group: Any = None, buffer: str = "pool", *, source: Optional[str] = None) -> "Plan":
        """A symmetric registration (register_mem_pool(pool, symm=True), symmetric memory rendezvous) on `group`."""
        return self.add("register", group, buffer=buffer, source=source or _source())

    def all_reduce(self, group: Any = None, *, source: Optional[str] = None) -> "Plan":
        return self.add("all_reduce", group, source=source or _source())

    def barrier(self, group: Any = None, *, source: Optional[str] = None) -> "Plan":
        return self.add("barrier", group, source=source or _source())

    def to_json(self) -> str:
        return json.dumps([c.__dict__ for c in self.calls], separators=(",", ":"))


def _safe_name(label: str, used: dict[str, str], key: str) -> str:
    base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in label) or "g"
    if not (base[0].isalpha() or base[0] == "_"):
        base = "g_" + base
    name, k = base, 2
    while name in used.values() and used.get(key) != name:
        name, k = f"{base}_{k}", k + 1
    used[key] = name
    return name


def scenario_of(plans: dict[int, list[dict[str, Any]]], world: int, phase: str = "phase") -> str:
    """The scenario of every rank's planned calls (one rank's plan: a list of PlannedCall fields)."""
    names: dict[str, str] = {}
    comms: dict[str, tuple[list[int], bool]] = {}
    for calls in plans.values():
        for c in calls:
            if c["group"] not in names:
                _safe_name(c["label"], names, c["group"])
                comms[c["group"]] = ([], "gloo" in c["backend"] and "nccl" not in c["backend"])
            if c["ranks"] and not comms[c["group"]][0]:
                comms[c["group"]] = (_ranks_of(c["ranks"]), comms[c["group"]][1])

    out = [f"# collmc precheck of phase '{phase}': the calls each rank planned", f"ranks {world}",
           f"name \"precheck {phase}\"", ""]
    for key, (ranks, host) in comms.items():
        out.append(f"comm {names[key]} = [{', '.join(map(str, ranks))}]{' mpi' if host else ''}")
    out.append("")
    for r in range(world):
        calls = plans.get(r, [])
        if not calls:
            continue
        out.append(f"rank {r} {{")
        allocated: set[str] = set()
        for c in calls:
            n = names[c["group"]]
            src = str(c.get("source", "")).replace("\n", " ")
            if c["op"] in ("register", "deregister"):
                buf = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in (c.get("buffer") or "pool"))
                if c["op"] == "register" and buf not in allocated:
                    out.append(f"  alloc {buf}")
                    allocated.add(buf)
                stmt = f"register {n} {buf} symmetric" if c["op"] == "register" else f"deregister {n} {buf}"
            elif c["op"] in ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "all_to_all"):
                stmt = f"{_OPS[c['op']]} {n} buf_{n}"
            else:
                stmt = f"{_OPS[c['op']]} {n}"
            out.append(f"  {stmt}  # {src}")
        out.append("}")
    return "\n".join(out) + "\n"


def _default_store() -> Any:
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    get = getattr(c10d, "_get_default_store", None)
    if get is None:
        raise RuntimeError("precheck: no default store (call init_process_group first, or pass store=)")
    return get()


_generation: dict[str, int] = {}


def check_plan(plan: Plan, *, store: Any = None, rank: Optional[int] = None, world: Optional[int] = None,
               checker_rank: int = 0, timeout: float = 300.0) -> Result:
    """Every rank calls it with its own plan; returns the same Result on every rank, or raises HangPredicted on
    every rank when the plans can hang (deadlock, mismatch, ...). Nothing of the plan is called."""
    if rank is None or world is None:
        d = _torch_dist()
        rank = d.get_rank() if rank is None else rank
        world = d.get_world_size() if world is None else world
    store = store or _default_store()
    gen = _generation.get(plan.phase, 0)
    _generation[plan.phase] = gen + 1
    prefix = f"collmc/precheck/{plan.phase}/{gen}"
    store.set(f"{prefix}/plan/{rank}", plan.to_json())
    if rank == checker_rank:
        plans: dict[int, list[dict[str, Any]]] = {}
        for r in range(world):
            plans[r] = json.loads(_get(store, f"{prefix}/plan/{r}", timeout))
        text = scenario_of(plans, world, plan.phase)
        try:
            result = check(text)
            # Every rank fetches this: the verdict, and of a hang only what is on the cycle (compact_result).
            payload = json.dumps({"verdict": result.verdict, "exit_code": result.exit_code,
                                  "report": result.report[:8000], **compact_result(result.json, text)})
        except Exception as e:  # the check itself failed: every rank must hear it
            payload = json.dumps({"error": f"{type(e).__name__}: {e}"})
        store.set(f"{prefix}/result", payload)
    answer = json.loads(_get(store, f"{prefix}/result", timeout))
    if "error" in answer:
        raise RuntimeError(f"precheck '{plan.phase}': the check failed on rank {checker_rank}: {answer['error']}")
    result = parse_result(answer["json"], exit_code=int(answer["exit_code"]), report=answer["report"],
                          origins={int(k): v for k, v in answer["origins"].items()})
    if result.verdict not in ("safe", "inconclusive"):
        sources = [h.location.origin for h in result.cycle if h.location is not None and h.location.origin]
        hops = "; ".join(result.explanations[:1]) or result.verdict
        where = "".join(f"\n  rank {h.rank}: {h.call} at {h.location.origin if h.location else '?'}"
                        for h in result.cycle)
        raise HangPredicted(f"precheck '{plan.phase}': the planned calls can hang ({result.verdict}): {hops}{where}",
                            result, sources)
    return result


def _get(store: Any, key: str, timeout: float) -> str:
    start = time.monotonic()
    try:
        store.wait([key], _timedelta(timeout))
    except TypeError:
        store.wait([key])
    except Exception as e:
        if time.monotonic() - start >= timeout:
            raise TimeoutError(f"precheck: no {key} after {timeout} s") from e
        raise
    v = store.get(key)
    return v.decode() if isinstance(v, (bytes, bytearray)) else str(v)


def _timedelta(seconds: float) -> Any:
    from datetime import timedelta
    return timedelta(seconds=seconds)


class precheck:  # noqa: N801 (a context manager named as the call reads)
    """`with collmc.torch.precheck("phase") as plan: plan.register(g1); ...`: the plan is checked on exit
    (check_plan), before the program makes any of its calls."""

    def __init__(self, phase: str = "phase", *, store: Any = None, timeout: float = 300.0) -> None:
        self.plan = Plan(phase)
        self._store = store
        self._timeout = timeout
        self.result: Optional[Result] = None

    def __enter__(self) -> Plan:
        return self.plan

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is None:
            self.result = check_plan(self.plan, store=self._store, timeout=self._timeout)
        return False

