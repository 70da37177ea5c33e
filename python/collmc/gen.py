"""Scenario generators (`collmc gen FAMILY`), as functions returning the scenario text."""
from __future__ import annotations

from typing import Optional, Sequence

from collmc._binary import run as _run


def _generate(family: str, args: list[str]) -> str:
    p = _run(["gen", family, *args, "-o", "-"])
    if p.returncode != 0:
        from collmc import CollmcInputError
        raise CollmcInputError(p.stderr.strip() or f"collmc gen {family} failed", exit_code=p.returncode,
                               stderr=p.stderr)
    return p.stdout


def megatron(world: Optional[int] = None, *, tp: int = 1, cp: int = 1, pp: int = 1, ep: int = 1, etp: int = 1,
             dist_opt_instances: int = 1, ubr_groups: Optional[Sequence[str]] = None, order: str = "list",
             late_segments: str = "none", collectives: bool = False,
             megatron_args: Optional[Sequence[str]] = None) -> str:
    """Megatron-LM's process groups and its FSDP buffer registration (`collmc gen megatron`). `megatron_args`:
    Megatron-LM's own launch flags (['--tensor-model-parallel-size', '2', ...], or torchrun's line with
    --nproc-per-node and --nnodes for the world); flags that do not shape the groups are ignored. World: 8 unless
    given or set by the launch line."""
    args = [] if world is None else ["--world", str(world)]
    if megatron_args is not None:
        args += ["--megatron-args", " ".join(megatron_args)]
    else:
        args += ["--tp", str(tp), "--cp", str(cp), "--pp", str(pp), "--ep", str(ep), "--etp", str(etp),
                 "--dist-opt-instances", str(dist_opt_instances)]
    if ubr_groups:
        args += ["--ubr-groups", ",".join(ubr_groups)]
    args += ["--order", order, "--late-segments", late_segments]
    if collectives:
        args.append("--collectives")
    return _generate("megatron", args)


def ring(comms: int = 3, *, agreed: bool = False, profile: str = "nccl") -> str:
    """A ring of two-rank communicators registered in rotating order (`collmc gen ring`)."""
    return _generate("ring", ["--comms", str(comms), "--profile", profile] + (["--agreed"] if agreed else []))
