"""The torch shim: runs inside the user's program and records what torch.distributed does, from Python.

Installed by `collmc record` (through collmc/record/_boot/sitecustomize.py on PYTHONPATH) or by
`import collmc.record` / `python -m collmc.record PROGRAM` when $COLLMC_RECORD (or $COLLMC_TRACE_DIR) names a
directory. It writes one JSON-lines file per process, DIR/collmc-trace.<host>.<pid>.torch.jsonl, in the
recorder's line format (docs/TRACES.md, "The torch shim"): a `process` line ("format":"collmc-torch"), then an
`enter` line before and a `return` line after every recorded call, with the same seq, tid (the kernel thread id),
CLOCK_MONOTONIC and CLOCK_REALTIME times as the NCCL recorder writes, so that the NCCL calls a torch call made are
the NCCL recorder's lines of the same process and thread between its enter and its return.

Recorded: init_process_group and new_group / new_subgroups / split_group (the group's index, torch's name and
description where the version has them, its ranks, backend), every collective, p2p call and barrier,
destroy_process_group, ProcessGroupNCCL.register_mem_pool / deregister_mem_pool, torch.cuda.MemPool, symmetric
memory rendezvous; each with the user's source line (file:line:function of the nearest frame outside torch).
Only the outermost call of a thread is recorded (torch calls its own functions). The shim never changes what a
call does or returns; if its file cannot be written the program runs on unrecorded. Standard library only; it
imports torch only after the program did.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import socket
import sys
import threading
import time
from typing import Any, Callable, Optional

FORMAT = "collmc-torch"
VERSION = 1

_lock = threading.Lock()
_state: dict[str, Any] = {"fd": -1, "seq": 0, "dir": None, "pid": -1, "failed": False, "installed": False}
_local = threading.local()
_SHIM_DIR = os.path.dirname(os.path.abspath(__file__))
_skip_dirs: list[str] = [_SHIM_DIR]

# Groups, by id of the ProcessGroup object: the index every rank agrees on (the default group 0, then one per
# group-making call in program order, which torch requires every rank to make alike).
_group_index: dict[int, int] = {}
_group_objs: dict[int, Any] = {}
_next_group = [1]
_pools: dict[int, int] = {}


def trace_dir() -> Optional[str]:
    return os.environ.get("COLLMC_RECORD") or os.environ.get("COLLMC_TRACE_DIR") or None


def _ascii(s: object, limit: int = 240) -> str:
    t = str(s).encode("ascii", "replace").decode("ascii")
    return t if len(t) <= limit else t[: limit - 3] + "..."


def _env_int(name: str) -> int:
    try:
        return int(os.environ.get(name, "-1"))
    except ValueError:
        return -1


def _open() -> int:
    """The process's trace file, opened at its first recorded call (again in a forked child)."""
    pid = os.getpid()
    if _state["fd"] >= 0 and _state["pid"] == pid:
        return int(_state["fd"])
    if _state["failed"] and _state["pid"] == pid:
        return -1
    _state.update(pid=pid, seq=0, failed=False, fd=-1)
    d = _state["dir"] or trace_dir()
    if not d:
        _state["failed"] = True
        return -1
    host = socket.gethostname()
    try:
        os.makedirs(d, exist_ok=True)
        fd = os.open(os.path.join(d, f"collmc-trace.{host}.{pid}.torch.jsonl"),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    except OSError:
        _state["failed"] = True
        return -1
    _state["fd"] = fd
    torch_version = ""
    t = sys.modules.get("torch")
    if t is not None:
        torch_version = str(getattr(t, "__version__", ""))
    _write(fd, {"ev": "process", "format": FORMAT, "version": VERSION, "pid": pid, "ppid": os.getppid(), "host": host,
                "exe": _ascii(sys.executable), "t_mono_ns": time.monotonic_ns(), "t_wall_ns": time.time_ns(),
                "env_rank": _env_int("RANK"), "env_local_rank": _env_int("LOCAL_RANK"),
                "env_world_size": _env_int("WORLD_SIZE"), "torch": _ascii(torch_version)})
    return fd


def _write(fd: int, obj: dict[str, Any]) -> None:
    # One write(2) of one whole line to an O_APPEND file: nothing waits in a buffer when the program hangs or is
    # killed, and lines of threads never mix.
    try:
        os.write(fd, (json.dumps(obj, separators=(",", ":"), ensure_ascii=True) + "\n").encode("ascii"))
    except OSError:
        pass


def _source_line() -> str:
    """file:line:function of the nearest frame outside torch and this shim."""
    f = sys._getframe(2)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not any(fn.startswith(d + os.sep) for d in _skip_dirs) and not fn.startswith("<frozen"):
            return _ascii(f"{f.f_code.co_filename}:{f.f_lineno}:{f.f_code.co_name}")
        f = f.f_back
    return "?"


def _begin(call: str, fields: dict[str, Any]) -> tuple[int, int]:
    with _lock:
        fd = _open()
        if fd < 0:
            return -1, 0
        _state["seq"] += 1
        seq = int(_state["seq"])
    line = {"ev": "enter", "seq": seq, "tid": threading.get_native_id(), "t_mono_ns": time.monotonic_ns(),
            "t_wall_ns": time.time_ns(), "call": call}
    line.update(fields)
    _write(fd, line)
    return fd, seq


def _end(fd: int, seq: int, call: str, error: Optional[BaseException], fields: dict[str, Any]) -> None:
    if fd < 0:
        return
    line: dict[str, Any] = {"ev": "return", "seq": seq, "tid": threading.get_native_id(),
                            "t_mono_ns": time.monotonic_ns(), "t_wall_ns": time.time_ns(), "call": call,
                            "result": 0 if error is None else 1}
    if error is not None:
        line["error"] = _ascii(f"{type(error).__name__}: {error}", 200)
    line.update(fields)
    _write(fd, line)


# --- what a call's arguments say ---------------------------------------------------------------------------

def _dist() -> Any:
    return sys.modules.get("torch.distributed")


def _c10d() -> Any:
    return sys.modules.get("torch.distributed.distributed_c10d")


def _group_of(group: Any) -> int:
    """The index of a process group (0: the default group; -1: not a group this process belongs to)."""
    if group is None:
        return 0
    c10d = _c10d()
    if c10d is not None:
        member = getattr(c10d, "GroupMember", None)
        if member is not None and group is getattr(member, "NON_GROUP_MEMBER", object()):
            return -1
        world = getattr(member, "WORLD", None) if member is not None else None
        if world is not None and group is world:
            return 0
    return _group_index.get(id(group), -2)


def _group_ranks(pg: Any) -> list[int]:
    c10d = _c10d()
    if c10d is None:
        return []
    for name in ("get_process_group_ranks",):
        f = getattr(c10d, name, None)
        if f is not None:
            try:
                return [int(r) for r in f(pg)]
            except Exception:
                pass
    table = getattr(c10d, "_pg_group_ranks", None)
    if table is None:
        w = getattr(c10d, "_world", None)
        table = getattr(w, "pg_group_ranks", None) if w is not None else None
    if table is not None and pg in table:
        ranks = table[pg]
        return [g for g, _ in sorted(ranks.items(), key=lambda kv: kv[1])]
    return []


def describe_group(pg: Any) -> tuple[str, str, str]:
    """(name, description, backend) of a process group as this torch version has them ("" where it has none):
    torch 2.x's group_name and group_desc, 1.13's _pg_names; the backend as get_backend says it."""
    c10d = _c10d()
    name = desc = backend = ""
    if c10d is None or pg is None:
        return name, desc, backend
    try:
        name = str(getattr(pg, "group_name", "") or "")
    except Exception:
        name = ""
    if not name:
        names = getattr(c10d, "_pg_names", None)
        if names is None:
            w = getattr(c10d, "_world", None)
            names = getattr(w, "pg_names", None) if w is not None else None
        if names is not None and pg in names:
            name = str(names[pg])
    try:
        desc = str(getattr(pg, "group_desc", "") or "")
    except Exception:
        desc = ""
    try:
        backend = str(c10d.get_backend(pg))
    except Exception:
        backend = ""
    return name, desc, backend


def group_ranks(pg: Any) -> list[int]:
    """The group's global ranks in group-rank order."""
    return _group_ranks(pg)


def _group_fields(pg: Any, index: int, ranks_hint: Optional[list[int]] = None) -> dict[str, Any]:
    c10d = _c10d()
    out: dict[str, Any] = {"pg": index}
    member = pg is not None and index >= 0
    out["member"] = 1 if member else 0
    name, desc, backend = describe_group(pg) if member else ("", "", "")
    ranks = _group_ranks(pg) if member else []
    if not ranks and ranks_hint is not None:
        ranks = ranks_hint
    out.update({"name": _ascii(name, 120), "desc": _ascii(desc, 120), "backend": _ascii(backend, 40),
                "ranks": _ascii(",".join(str(r) for r in ranks), 240), "size": len(ranks)})
    if len(",".join(str(r) for r in ranks)) > 240:
        out["ranks"] = ""
        out["ranks_range"] = _ranks_range(ranks)
    return out


def _ranks_range(ranks: list[int]) -> str:
    """Long member lists as first:last:step when they are one (a JSON string stays under 240 characters)."""
    if len(ranks) >= 2 and all(ranks[i + 1] - ranks[i] == ranks[1] - ranks[0] for i in range(len(ranks) - 1)):
        return f"{ranks[0]}:{ranks[-1]}:{ranks[1] - ranks[0]}"
    return ""


_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
           "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int8": "int8", "uint8": "uint8",
           "int32": "int32", "int": "int32", "int64": "int64", "long": "int64", "float8_e4m3fn": "float8e4m3",
           "float8_e5m2": "float8e5m2", "bool": "uint8"}


def _tensor_fields(t: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(t, (list, tuple)):
        if not t:
            return out
        out["tensors"] = len(t)
        t = t[0]
    try:
        out["buf"] = hex(int(t.data_ptr()))  # the data's address: names the buffer, as the NCCL recorder does
        out["count"] = int(t.numel())
        out["dtype"] = _DTYPES.get(str(t.dtype).replace("torch.", ""), "unknown")
        out["device"] = _ascii(str(t.device), 40)
    except Exception:
        pass
    return out


def _op_name(op: Any) -> str:
    s = str(op).lower()
    for n in ("sum", "product", "prod", "min", "max", "avg", "band", "bor", "bxor", "premul_sum"):
        if s.endswith(n) or s.endswith("." + n) or ("." + n) in s:
            return {"product": "prod", "premul_sum": "premulsum"}.get(n, n)
    return _ascii(s, 40)


def _global(rank: Any) -> int:
    try:
        return int(rank)
    except Exception:
        return -1


# --- wrapping ----------------------------------------------------------------------------------------------

# Collectives and p2p: name -> (tensor parameter, peer parameter or "", rooted parameter or "").
_COLLECTIVES: dict[str, tuple[str, str, str]] = {
    "all_reduce": ("tensor", "", ""), "reduce": ("tensor", "", "dst"), "broadcast": ("tensor", "", "src"),
    "all_gather": ("tensor", "", ""), "all_gather_into_tensor": ("input_tensor", "", ""),
    "_all_gather_base": ("input_tensor", "", ""), "all_gather_object": ("obj", "", ""),
    "reduce_scatter": ("output", "", ""), "reduce_scatter_tensor": ("output", "", ""),
    "_reduce_scatter_base": ("output", "", ""), "all_to_all": ("input_tensor_list", "", ""),
    "all_to_all_single": ("input", "", ""), "gather": ("tensor", "", "dst"), "scatter": ("tensor", "", "src"),
    "broadcast_object_list": ("object_list", "", "src"), "barrier": ("", "", ""), "monitored_barrier": ("", "", ""),
    "send": ("tensor", "dst", ""), "recv": ("tensor", "src", ""), "isend": ("tensor", "dst", ""),
    "irecv": ("tensor", "src", ""), "batch_isend_irecv": ("p2p_op_list", "", ""),
    "all_reduce_coalesced": ("tensors", "", ""),
}


def _bound(orig: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    sig = getattr(orig, "__collmc_sig__", None)
    if sig is None:
        try:
            sig = inspect.signature(orig)
        except (TypeError, ValueError):
            return dict(kwargs)
        try:
            orig.__collmc_sig__ = sig  # type: ignore[attr-defined]
        except (AttributeError, TypeError):
            pass
    try:
        b = sig.bind_partial(*args, **kwargs)
    except TypeError:
        return dict(kwargs)
    return dict(b.arguments)


def _recording(call: str, orig: Callable[..., Any], describe: Callable[[dict[str, Any]], dict[str, Any]],
               after: Optional[Callable[[dict[str, Any], Any], dict[str, Any]]] = None) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if getattr(_local, "depth", 0) > 0:
            return orig(*args, **kwargs)
        _local.depth = 1
        try:
            try:
                a = _bound(orig, args, kwargs)
                fields = {"src": _source_line()}
                fields.update(describe(a))
            except Exception as e:  # never let the shim change what the program does
                fields = {"src": "?", "shim_error": _ascii(e, 120)}
                a = {}
            fd, seq = _begin(call, fields)
            try:
                out = orig(*args, **kwargs)
            except BaseException as e:
                _end(fd, seq, call, e, {})
                raise
            ret: dict[str, Any] = {}
            if after is not None:
                try:
                    ret = after(a, out)
                except Exception as e:
                    ret = {"shim_error": _ascii(e, 120)}
            _end(fd, seq, call, None, ret)
            return out
        finally:
            _local.depth = 0

    wrapper.__collmc_wrapped__ = orig  # type: ignore[attr-defined]
    return wrapper


def _describe_collective(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    tensor_param, peer_param, root_param = _COLLECTIVES[name]

    def describe(a: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"pg": _group_of(a.get("group"))}
        if tensor_param and tensor_param in a and not name.endswith("_object") and name != "broadcast_object_list":
            out.update(_tensor_fields(a[tensor_param]))
        if "op" in a:
            out["op"] = _op_name(a["op"])
        if peer_param:
            out["peer"] = _global(a.get(peer_param, -1))
        if root_param:
            out["root"] = _global(a.get(root_param, 0))
        if a.get("async_op"):
            out["async_op"] = 1
        if name == "batch_isend_irecv":
            ops = a.get("p2p_op_list") or []
            out["n_ops"] = len(ops)
            if ops:
                out["pg"] = _group_of(getattr(ops[0], "group", None))
        return out

    return describe


def _register_group(pg: Any) -> int:
    if pg is None:
        return -1
    c10d = _c10d()
    member = getattr(c10d, "GroupMember", None) if c10d is not None else None
    if member is not None and pg is getattr(member, "NON_GROUP_MEMBER", object()):
        return -1
    if id(pg) not in _group_index:
        _group_index[id(pg)] = _next_group[0]
        _group_objs[id(pg)] = pg  # kept alive, so that its id is not reused
        _next_group[0] += 1
    return _group_index[id(pg)]


def _after_init(a: dict[str, Any], out: Any) -> dict[str, Any]:
    c10d = _c10d()
    d = _dist()
    world = getattr(getattr(c10d, "GroupMember", None), "WORLD", None)
    if world is not None:
        _group_index[id(world)] = 0
        _group_objs[id(world)] = world
    fields = _group_fields(world, 0)
    if d is not None:
        fields["rank"] = int(d.get_rank())
        fields["world_size"] = int(d.get_world_size())
    return fields


def _after_new_group(a: dict[str, Any], out: Any) -> dict[str, Any]:
    index = _next_group[0]
    got = _register_group(out)
    if got < 0:  # this rank is not a member: the group still takes its index on every rank
        _next_group[0] += 1
    ranks = a.get("ranks")
    hint = sorted(int(r) for r in ranks) if ranks else None
    if hint is None:
        d = _dist()
        hint = list(range(int(d.get_world_size()))) if d is not None else None
    return _group_fields(out if got >= 0 else None, got if got >= 0 else index, hint)


def _after_new_subgroups(a: dict[str, Any], out: Any) -> dict[str, Any]:
    # new_subgroups returns (this rank's subgroup, every subgroup); every rank makes them all, in order.
    mine, groups = out
    fields: dict[str, Any] = {}
    for g in groups:
        i = _register_group(g)
        if g is mine:
            fields = _group_fields(g, i)
    fields["n_groups"] = len(groups)
    return fields


def _describe_new_group(a: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    ranks = a.get("ranks")
    if ranks is not None:
        out["ranks"] = _ascii(",".join(str(int(r)) for r in ranks))
    if a.get("backend") is not None:
        out["backend"] = _ascii(a["backend"], 40)
    return out


def _describe_split(a: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"parent": _group_of(a.get("parent_pg"))}
    splits = a.get("split_ranks")
    if splits:
        out["split_ranks"] = _ascii(";".join(",".join(str(int(r)) for r in s) for s in splits))
    return out


def _after_split(a: dict[str, Any], out: Any) -> dict[str, Any]:
    index = _next_group[0]
    got = _register_group(out)
    if got < 0:
        _next_group[0] += 1
    return _group_fields(out if got >= 0 else None, got if got >= 0 else index)


def _describe_destroy(a: dict[str, Any]) -> dict[str, Any]:
    g = a.get("group")
    return {"pg": -3 if g is None else _group_of(g)}  # -3: every group of the process


def _pool_id(pool: Any) -> int:
    if pool is None:
        return -1
    if id(pool) not in _pools:
        _pools[id(pool)] = len(_pools) + 1
    return _pools[id(pool)]


_backends: dict[int, tuple[int, Any]] = {}  # id(backend) -> (group index, the backend, kept alive)


def _remember_backends(pg_cls: Any) -> None:
    """ProcessGroup._get_backend(device) hands the program the backend whose register_mem_pool it calls: each one
    it returns is remembered with its group."""
    orig = getattr(pg_cls, "_get_backend", None)
    if orig is None or getattr(orig, "__collmc_wrapped__", None) is not None:
        return

    def get_backend(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = orig(self, *args, **kwargs)
        try:
            index = _group_of(self)
            if index >= 0:
                _backends[id(out)] = (index, out)
        except Exception:
            pass
        return out

    get_backend.__collmc_wrapped__ = orig  # type: ignore[attr-defined]
    try:
        setattr(pg_cls, "_get_backend", get_backend)
    except (AttributeError, TypeError):
        pass


def _backend_group(backend: Any) -> int:
    """The group a backend object (ProcessGroupNCCL) serves."""
    if id(backend) in _backends:
        return int(_backends[id(backend)][0])
    for key, pg in list(_group_objs.items()):
        try:
            import torch  # the program imported it already
            for dev in ("cuda",):
                if pg._get_backend(torch.device(dev)) is backend:
                    return _group_index[key]
        except Exception:
            continue
    return -2


def _wrap_method(cls: Any, name: str, call: str, describe: Callable[[Any, dict[str, Any]], dict[str, Any]]) -> None:
    orig = getattr(cls, name, None)
    if orig is None or getattr(orig, "__collmc_wrapped__", None) is not None:
        return

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(_local, "depth", 0) > 0:
            return orig(self, *args, **kwargs)
        _local.depth = 1
        try:
            try:
                fields = {"src": _source_line()}
                fields.update(describe(self, {"args": args, "kwargs": kwargs}))
            except Exception as e:
                fields = {"src": "?", "shim_error": _ascii(e, 120)}
            fd, seq = _begin(call, fields)
            try:
                out = orig(self, *args, **kwargs)
            except BaseException as e:
                _end(fd, seq, call, e, {})
                raise
            _end(fd, seq, call, None, {})
            return out
        finally:
            _local.depth = 0

    method.__collmc_wrapped__ = orig  # type: ignore[attr-defined]
    try:
        setattr(cls, name, method)
    except (AttributeError, TypeError):
        pass


def _pool_segments(pool: Any) -> list[dict[str, Any]] | None:
    """The caching allocator's segments of a MemPool, as torch.cuda.memory_snapshot() describes them (the
    segments ProcessGroupNCCL.register_mem_pool registers one by one); None when this torch cannot say."""
    snapshot = getattr(pool, "snapshot", None)
    try:
        if callable(snapshot):
            try:
                segments = snapshot(include_traces=False)  # torch 2.8+: no trace entries (cheap)
            except TypeError:
                segments = snapshot()
        else:
            pool_id = getattr(pool, "id", None)
            memory_snapshot = sys.modules["torch.cuda"].memory_snapshot  # imported: a MemPool exists
            segments = [s for s in memory_snapshot() if s.get("segment_pool_id") == pool_id]
    except Exception:
        return None
    return segments if isinstance(segments, list) else None


def _segment_fields(pool: Any) -> dict[str, Any]:
    """What the memory of the pool is, for the reader: "segments" lists ADDRESS/SIZE/KIND for each segment, KIND
    "vmm" for an expandable segment (cuMemCreate + cuMemMap: what ncclCommWindowRegister takes), "malloc" for a
    plain cudaMalloc one, "custom" for memory from the pool's own allocator (torch.cuda.memory.CUDAPluggableAllocator,
    NCCL's ncclMemAlloc: collmc cannot tell). Left out when torch cannot say."""
    if pool is None:
        return {}
    segments = _pool_segments(pool)
    if segments is None:
        return {}
    custom = getattr(pool, "allocator", None) is not None
    parts = []
    for seg in segments[:64]:
        try:
            kind = "custom" if custom else ("vmm" if seg.get("is_expandable") else "malloc")
            parts.append("0x%x/%d/%s" % (int(seg["address"]), int(seg["total_size"]), kind))
        except (KeyError, TypeError, ValueError):
            return {}
    out: dict[str, Any] = {"segments": ",".join(parts)}
    if len(segments) > len(parts):
        out["segments_left_out"] = len(segments) - len(parts)
    return out


def _describe_pool_call(self: Any, a: dict[str, Any]) -> dict[str, Any]:
    args, kwargs = a["args"], a["kwargs"]
    pool = args[0] if args else kwargs.get("pool")
    out: dict[str, Any] = {"pg": _backend_group(self), "pool": _pool_id(pool)}
    symm = kwargs.get("symm", args[1] if len(args) > 1 else None)
    if symm is not None:
        out["symm"] = 1 if symm else 0
    out.update(_segment_fields(pool))
    return out


def _patch_module(mod: Any, names: dict[str, Callable[..., Any]]) -> None:
    for name, make in names.items():
        orig = getattr(mod, name, None)
        if orig is None or getattr(orig, "__collmc_wrapped__", None) is not None:
            continue
        setattr(mod, name, make(orig))


def install_on_torch() -> None:
    """Wraps torch.distributed's functions (both the module and distributed_c10d, which calls its own)."""
    d = sys.modules.get("torch.distributed")
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    if d is None or c10d is None or _state.get("torch_patched"):
        return
    _state["torch_patched"] = True
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        _skip_dirs.append(os.path.dirname(os.path.abspath(torch.__file__)))
    makers: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {}
    for name in _COLLECTIVES:
        makers[name] = (lambda n: lambda orig: _recording(n, orig, _describe_collective(n)))(name)
    makers["init_process_group"] = lambda orig: _recording(
        "init_process_group", orig, lambda a: {"backend": _ascii(a.get("backend") or "", 40)}, _after_init)
    makers["new_group"] = lambda orig: _recording("new_group", orig, _describe_new_group, _after_new_group)
    makers["new_subgroups"] = lambda orig: _recording("new_subgroups", orig, lambda a: {}, _after_new_subgroups)
    makers["split_group"] = lambda orig: _recording("split_group", orig, _describe_split, _after_split)
    makers["destroy_process_group"] = lambda orig: _recording("destroy_process_group", orig, _describe_destroy)
    # The functions as the program calls them (torch.distributed.X) and as torch calls them (distributed_c10d.X):
    # both point at the same wrapper.
    wrapped: dict[str, Callable[..., Any]] = {}
    for name, make in makers.items():
        orig = getattr(c10d, name, None)
        if orig is None:
            continue
        w = make(orig)
        wrapped[name] = w
        setattr(c10d, name, w)
        if getattr(d, name, None) is orig:
            setattr(d, name, w)
    pg_cls = getattr(d, "ProcessGroup", None)
    if pg_cls is not None:
        _remember_backends(pg_cls)
    nccl = getattr(d, "ProcessGroupNCCL", None)
    if nccl is not None:
        _wrap_method(nccl, "register_mem_pool", "register_mem_pool", _describe_pool_call)
        _wrap_method(nccl, "deregister_mem_pool", "deregister_mem_pool", _describe_pool_call)
    symm = sys.modules.get("torch.distributed._symmetric_memory")
    if symm is not None:
        _patch_symmetric_memory(symm)


def _patch_symmetric_memory(symm: Any) -> None:
    def describe(a: dict[str, Any]) -> dict[str, Any]:
        g = a.get("group")
        out = {"pg": _group_of(g) if not isinstance(g, str) else -2}
        if isinstance(g, str):
            out["group_name"] = _ascii(g, 120)
        out.update(_tensor_fields(a.get("tensor")))
        return out
    _patch_module(symm, {"rendezvous": lambda orig: _recording("symm_mem_rendezvous", orig, describe)})


def install_on_cuda() -> None:
    """Records torch.cuda.MemPool creation (its index names the pool in register_mem_pool)."""
    cuda = sys.modules.get("torch.cuda")
    pool_cls = getattr(cuda, "MemPool", None) if cuda is not None else None
    if pool_cls is None or _state.get("cuda_patched"):
        return
    _state["cuda_patched"] = True
    orig_init = pool_cls.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        if getattr(_local, "depth", 0) > 0:
            orig_init(self, *args, **kwargs)
            return
        _local.depth = 1
        try:
            fd, seq = _begin("MemPool", {"src": _source_line()})
            try:
                orig_init(self, *args, **kwargs)
            except BaseException as e:
                _end(fd, seq, "MemPool", e, {})
                raise
            _end(fd, seq, "MemPool", None, {"pool": _pool_id(self)})
        finally:
            _local.depth = 0

    try:
        pool_cls.__init__ = init
    except (AttributeError, TypeError):
        pass


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches torch.distributed (and torch.cuda, symmetric memory) right after the program imports them."""

    _targets = {"torch.distributed": install_on_torch, "torch.cuda": install_on_cuda,
                "torch.distributed._symmetric_memory": lambda: _patch_symmetric_memory(
                    sys.modules["torch.distributed._symmetric_memory"])}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        hook = self._targets.get(fullname)
        if hook is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        orig_exec = loader.exec_module

        def exec_module(module: Any) -> None:
            orig_exec(module)
            try:
                if fullname == "torch.cuda":
                    # torch.cuda is imported by torch/__init__ before torch.distributed; MemPool is defined then.
                    install_on_cuda()
                else:
                    hook()
            except Exception:
                pass

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(directory: Optional[str] = None) -> bool:
    """Starts recording into `directory` (default $COLLMC_RECORD, else $COLLMC_TRACE_DIR). False: nowhere to write."""
    d = directory or trace_dir()
    if not d:
        return False
    _state["dir"] = os.path.abspath(d)
    os.environ.setdefault("COLLMC_RECORD", _state["dir"])
    if _state["installed"]:
        return True
    _state["installed"] = True
    if "torch.distributed" in sys.modules:
        install_on_torch()
    if "torch.cuda" in sys.modules:
        install_on_cuda()
    sys.meta_path.insert(0, _AfterImport())
    return True
