"""Write CuPy's API surface and manners to tests/support/data/cupy_surface.json (run where CuPy and a GPU exist).

The strict stand-in namespace (tests/support/strict_namespace.py) offers exactly the names, array
attributes and ufunc methods listed there, and mixes NumPy values into its calls as CuPy does, so
that code which passes on the stand-in on a CPU-only machine runs on CuPy too.

    python tests/support/cupy_surface.py [OUT.json]
"""
from __future__ import annotations

import inspect
import json
import operator
import pathlib
import sys

import numpy as np


def _public(module) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def _ufunc_methods(cp, ufunc) -> list[str]:
    """Which of reduce/accumulate/outer/at this CuPy ufunc supports on float64 (int64 for integer-only ufuncs)."""
    def arrays():
        for dtype in ("float64", "int64", "bool"):
            a = cp.arange(1, 5).astype(dtype)
            try:
                ufunc(*[a] * ufunc.nin)
                return a
            except Exception:
                continue
        return None

    a = arrays()
    if a is None:
        return []
    tries = {"at": lambda: ufunc.at(a.copy(), cp.asarray([0, 0]), *([a[:2]] if ufunc.nin == 2 else []))}
    if ufunc.nin == 2:
        tries |= {"reduce": lambda: ufunc.reduce(a), "accumulate": lambda: ufunc.accumulate(a),
                  "outer": lambda: ufunc.outer(a, a), "reduceat": lambda: ufunc.reduceat(a, cp.asarray([0, 2]))}
    works = []
    for method, call in tries.items():
        try:
            call()
            works.append(method)
        except Exception:
            pass
    return works


def _keywords(cp, module, names) -> dict:
    """Each function's parameter names, where Python can read its signature (Cython ones often not)."""
    found = {}
    for name in names:
        fn = getattr(module, name, None)
        if not callable(fn) or isinstance(fn, (type, cp.ufunc)):
            continue
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            continue
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            found[name] = [p.name for p in params if p.kind is not p.VAR_POSITIONAL]
    return found


def outcome(call, cp) -> str:
    """'ok module.Type' or 'error Type: message' for call(cp)."""
    try:
        value = call(cp)
    except Exception as exc:
        return f"error {type(exc).__name__}: {str(exc)[:200]}"
    return f"ok {type(value).__module__}.{type(value).__name__}"


MANNERS = {   # how CuPy treats NumPy values and Python conversions (cp: CuPy or a stand-in for it)
    "cupy + numpy array": lambda cp: cp.arange(3) + np.arange(3),
    "numpy array + cupy": lambda cp: np.arange(3) + cp.arange(3),
    "cupy + 0-d numpy array": lambda cp: cp.arange(3) + np.array(1),
    "0-d numpy array + cupy": lambda cp: np.array(1) + cp.arange(3),
    "cupy + numpy scalar": lambda cp: cp.arange(3.0) * np.float64(2),
    "numpy scalar + cupy": lambda cp: np.float64(2) * cp.arange(3.0),
    "cupy function of a numpy array": lambda cp: cp.sum(np.arange(3)),
    "cupy function of a list": lambda cp: cp.sum([1, 2]),
    "numpy function of a cupy array": lambda cp: np.sum(cp.arange(3)),
    "numpy ufunc of a cupy array": lambda cp: np.exp(cp.arange(3.0)),
    "np.asarray of a cupy array": lambda cp: np.asarray(cp.arange(3)),
    "cupy indexed by a numpy int array": lambda cp: cp.arange(5)[np.array([1, 2])],
    "cupy indexed by a numpy bool array": lambda cp: cp.arange(3)[np.array([True, False, True])],
    "cupy indexed by a list": lambda cp: cp.arange(5)[[1, 2]],
    "cupy indexed by a 0-d cupy array": lambda cp: cp.arange(5)[cp.array(1)],
    "setitem of a numpy array": lambda cp: cp.zeros(3).__setitem__(slice(None), np.ones(3)),
    "concatenate with a numpy array": lambda cp: cp.concatenate([cp.zeros(2), np.zeros(2)]),
    "asarray of a list of 0-d cupy arrays": lambda cp: cp.asarray([cp.array(1.0), cp.array(2.0)]),
    "float of a 0-d cupy array": lambda cp: float(cp.array(1.5)),
    "int of a 0-d cupy array": lambda cp: int(cp.array(2)),
    "operator.index of a 0-d cupy array": lambda cp: operator.index(cp.array(2)),
    "bool of a 0-d cupy array": lambda cp: bool(cp.array(True)),
    "sum of a cupy array": lambda cp: cp.arange(3).sum(),
    "element of a cupy array": lambda cp: cp.arange(3)[0],
    "iterating a cupy array": lambda cp: next(iter(cp.arange(3))),
    "reshape by a numpy int": lambda cp: cp.arange(6).reshape(np.int64(2), 3),
    "full with a 0-d cupy fill": lambda cp: cp.full((2,), cp.array(1.0)),
    "tolist": lambda cp: cp.arange(3).tolist(),
}


def surface() -> dict:
    import cupy as cp
    import cupyx.scipy.special
    ufuncs = {n: _ufunc_methods(cp, getattr(cp, n)) for n in _public(cp) if isinstance(getattr(cp, n), cp.ufunc)}
    return {
        "cupy": cp.__version__,
        "numpy": np.__version__,
        "names": _public(cp),
        "linalg": _public(cp.linalg),
        "fft": _public(cp.fft),
        "random": _public(cp.random),
        "lib.stride_tricks": _public(cp.lib.stride_tricks),
        "cupyx.scipy.special": _public(cupyx.scipy.special),
        "ndarray": sorted(dir(cp.ndarray)),
        "ufunc_methods": ufuncs,
        "keywords": _keywords(cp, cp, _public(cp)),
        "linalg_keywords": _keywords(cp, cp.linalg, _public(cp.linalg)),
        "manners": {what: outcome(call, cp) for what, call in MANNERS.items()},
    }


if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "data" / "cupy_surface.json")
    out.write_text(json.dumps(surface(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")
