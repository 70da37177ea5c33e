"""The JSON result of `collmc check --json` (docs/RESULT_FORMAT.md) as Python objects."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional


@dataclass(frozen=True)
class Location:
    """A place in the scenario file; `origin` is the comment an import wrote on that line (the program's
    own file:line:function for traces of the torch shim, the trace line for others), or ""."""
    file: str
    line: int
    column: int = 0
    origin: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Hop:
    """One hop of the wait-for cycle: `rank` waits in `call` (at `location`) on `comm` for the next hop's rank."""
    rank: int
    thread: Optional[int]
    call: str
    location: Optional[Location]
    waits_for: str  # "host slot 0 of A"
    comm: Optional[str]
    slot: Optional[int]


@dataclass(frozen=True)
class Position:
    """Where one host thread or stream stands at the end of the schedule."""
    rank: int
    thread: Optional[int]
    stream: Optional[int]
    call: Optional[str]
    location: Optional[Location]
    finished: bool
    reason: str


@dataclass(frozen=True)
class Step:
    """One step of the schedule that reaches the bad outcome."""
    kind: str
    rank: int
    text: str
    thread: Optional[int] = None
    comm: Optional[str] = None
    calls: tuple[int, ...] = ()


@dataclass
class Result:
    """What `collmc check` found for one scenario."""
    verdict: str
    exit_code: int
    scenario: str
    cycle: list[Hop] = field(default_factory=list)
    cycles: list[list[Hop]] = field(default_factory=list)
    explanations: list[str] = field(default_factory=list)
    positions: list[Position] = field(default_factory=list)
    schedule: list[Step] = field(default_factory=list)
    violation: Optional[dict[str, Any]] = None
    observed: Optional[dict[str, Any]] = None
    limit: Optional[str] = None
    report: str = ""  # the text report collmc printed
    json: dict[str, Any] = field(default_factory=dict)

    @property
    def safe(self) -> bool:
        return self.verdict == "safe"

    @property
    def hangs(self) -> bool:
        return self.verdict == "deadlock"

    def origins(self) -> list[str]:
        """The import origins (the program's source lines) of the calls on the cycle, in cycle order."""
        return [h.location.origin for h in self.cycle if h.location is not None and h.location.origin]

    def __str__(self) -> str:
        return self.report or f"{self.scenario}: {self.verdict}"


_ORIGIN = re.compile(r"\s#\s(.*)$")


class _Lines:
    """The scenario's lines, read once, for the origin comments."""

    def __init__(self, path: Optional[str], text: Optional[str], origins: Optional[dict[int, str]] = None) -> None:
        self._lines: list[str] = []
        self._origins = origins
        if origins is not None:
            return
        try:
            if text is not None:
                self._lines = text.splitlines()
            elif path and Path(path).is_file():
                self._lines = Path(path).read_text(errors="replace").splitlines()
        except OSError:
            self._lines = []

    def origin(self, line: int) -> str:
        if self._origins is not None:
            return self._origins.get(line, "")
        if 1 <= line <= len(self._lines):
            m = _ORIGIN.search(self._lines[line - 1])
            if m:
                return m.group(1).strip()
        return ""


def _location(j: Optional[dict[str, Any]], lines: _Lines) -> Optional[Location]:
    if not j:
        return None
    line = int(j.get("line", 0))
    return Location(str(j.get("file", "")), line, int(j.get("column", 0)), lines.origin(line))


def _location_text(text: Optional[str], lines: _Lines) -> Optional[Location]:
    if not text or ":" not in text:
        return None
    file, _, line = text.rpartition(":")
    try:
        n = int(line)
    except ValueError:
        return None
    return Location(file, n, 0, lines.origin(n))


def parse_result(j: dict[str, Any], *, exit_code: int, report: str = "",
                 scenario_text: Optional[str] = None, origins: Optional[dict[int, str]] = None) -> Result:
    """A Result from the JSON result object (format collmc-result, version 1). The origin comments come from
    `origins` (scenario line -> origin), else `scenario_text`, else the scenario file the result names."""
    if j.get("format") != "collmc-result" or j.get("version") != 1:
        raise ValueError("not a collmc-result version 1 object")
    path = str(j.get("scenario", {}).get("file", ""))
    lines = _Lines(path if scenario_text is None else None, scenario_text, origins)
    calls = {int(c["id"]): c for c in j.get("calls", [])}
    comms = {int(c["id"]): str(c["name"]) for c in j.get("comms", [])}

    def call_text(call_id: Any) -> Optional[str]:
        return None if call_id is None or int(call_id) not in calls else str(calls[int(call_id)]["text"])

    def call_loc(call_id: Any) -> Optional[Location]:
        if call_id is None or int(call_id) not in calls:
            return None
        return _location(calls[int(call_id)].get("location"), lines)

    graph = j.get("wait_for_graph") or {}
    nodes = {int(n["id"]): n for n in graph.get("nodes", [])}
    out_edges: dict[int, dict[str, Any]] = {}
    for e in graph.get("edges", []):
        if e.get("on_cycle"):
            out_edges.setdefault(int(e["from"]), e)
    cycles: list[list[Hop]] = []
    for cyc in graph.get("cycles", []):
        hops = []
        for nid in cyc:
            n = nodes.get(int(nid), {})
            e = out_edges.get(int(nid), {})
            loc = call_loc(n.get("call")) or _location_text(n.get("location"), lines)
            hops.append(Hop(rank=int(n.get("rank", -1)), thread=n.get("thread"),
                            call=call_text(n.get("call")) or str(n.get("label", "")), location=loc,
                            waits_for=str(e.get("label", "")),
                            comm=comms.get(int(e["comm"])) if "comm" in e else None, slot=e.get("slot")))
        cycles.append(hops)
    positions = [Position(rank=int(b["rank"]), thread=b.get("thread"), stream=b.get("stream"),
                          call=call_text(b.get("call")), location=call_loc(b.get("call")),
                          finished=bool(b.get("finished")), reason=str(b.get("reason", "")))
                 for b in j.get("blocked", [])]
    schedule = [Step(kind=str(s["kind"]), rank=int(s["rank"]), text=str(s.get("text", "")), thread=s.get("thread"),
                     comm=comms.get(int(s["comm"])) if "comm" in s else None, calls=tuple(s.get("calls", ())))
                for s in j.get("schedule", [])]
    return Result(verdict=str(j["verdict"]), exit_code=exit_code, scenario=path, cycle=cycles[0] if cycles else [],
                  cycles=cycles, explanations=[str(x) for x in graph.get("explanations", [])], positions=positions,
                  schedule=schedule, violation=j.get("violation"), observed=j.get("observed"), limit=j.get("limit"),
                  report=report, json=j)


def compact_result(j: dict[str, Any], scenario_text: str) -> dict[str, Any]:
    """What a Result needs of a JSON result, at any world size: the verdict, the cycle and the calls, ranks and
    origins on it (not every call, program and rank's position: at 16k ranks those are megabytes that every rank
    would fetch). Returns {"json": ..., "origins": {line: origin}} for parse_result(json, origins=...)."""
    graph = j.get("wait_for_graph") or {}
    on_cycle = {int(n) for c in graph.get("cycles", []) for n in c}
    nodes = [n for n in graph.get("nodes", []) if int(n["id"]) in on_cycle]
    ranks = {int(n.get("rank", -1)) for n in nodes}
    wanted = {int(n["call"]) for n in nodes if n.get("call") is not None}
    blocked = [b for b in j.get("blocked", []) if int(b["rank"]) in ranks]
    wanted |= {int(b["call"]) for b in blocked if b.get("call") is not None}
    if j.get("violation") and j["violation"].get("call") is not None:
        wanted.add(int(j["violation"]["call"]))
    calls = [c for c in j.get("calls", []) if int(c["id"]) in wanted]
    edges = [e for e in graph.get("edges", []) if e.get("on_cycle")]
    used = {int(e["comm"]) for e in edges if "comm" in e} | {int(c["comm"]) for c in calls if "comm" in c}
    comms = [dict(c, members=[]) for c in j.get("comms", []) if int(c["id"]) in used]  # names, not members
    out = {k: j[k] for k in ("format", "version", "scenario", "expect", "verdict", "agrees", "observed", "limit",
                             "notes", "violation", "statistics") if k in j}
    out.update(comms=comms, calls=calls, blocked=blocked, schedule=[], programs=[],
               wait_for_graph={"nodes": nodes, "edges": edges,
                               "cycles": graph.get("cycles", []), "explanations": graph.get("explanations", [])[:4]})
    lines = _Lines(None, scenario_text)
    origins = {int(c["location"]["line"]): lines.origin(int(c["location"]["line"])) for c in calls if "location" in c}
    return {"json": out, "origins": {str(k): v for k, v in origins.items() if v}}
