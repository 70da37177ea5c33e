# Put on PYTHONPATH by `collmc record`: installs the torch shim (collmc/record/torch_shim.py) when the run is
# recorded ($COLLMC_TRACE_DIR or $COLLMC_RECORD), then runs the sitecustomize this one hides, if any.
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
if os.environ.get("COLLMC_TRACE_DIR") or os.environ.get("COLLMC_RECORD"):
    try:
        _spec = importlib.util.spec_from_file_location(
            "collmc_torch_shim", os.path.join(os.path.dirname(_here), "torch_shim.py"))
        if _spec is not None and _spec.loader is not None:
            _shim = importlib.util.module_from_spec(_spec)
            sys.modules["collmc_torch_shim"] = _shim
            _spec.loader.exec_module(_shim)
            _shim.install()
    except Exception as _e:  # never stop the program
        sys.stderr.write(f"collmc record: the torch shim is not installed: {_e}\n")
# The sitecustomize this one shadows (Debian's, a virtualenv's), found further along sys.path.
for _d in sys.path:
    if not _d or os.path.abspath(_d) == _here:
        continue
    _f = os.path.join(_d, "sitecustomize.py")
    if os.path.isfile(_f):
        _spec2 = importlib.util.spec_from_file_location("_collmc_next_sitecustomize", _f)
        if _spec2 is not None and _spec2.loader is not None:
            try:
                _spec2.loader.exec_module(importlib.util.module_from_spec(_spec2))
            except Exception:
                pass
        break
