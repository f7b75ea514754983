"""A strict stand-in for CuPy on machines without a GPU: NumPy underneath, CuPy's manners on top.

Tests put `cupy` (below) where gradviz.backend keeps CuPy, so device "cuda" runs on NumPy arrays
wrapped in `ndarray`, which behaves as cupy.ndarray does (tests/support/data/cupy_surface.json, written
on a GPU machine by tests/support/cupy_surface.py):

- no implicit conversion to NumPy: `np.asarray(a)` raises CuPy's TypeError;
- NumPy arrays are refused in arithmetic and in calls (NumPy and Python scalars are fine);
- only the functions, array attributes and ufunc methods that CuPy has exist, and a NumPy function
  called on an array runs only where CuPy has one of that name (as CuPy's __array_function__);
- reductions and element reads give 0-d arrays, not scalars.

So code that keeps every array operation inside the namespace gradviz.backend hands out runs here,
and a NumPy-only call that slipped past it fails here as it would on a GPU.
"""
from __future__ import annotations

import json
import pathlib
import types

import numpy as np

from gradviz.ops import special as _cpu_special

SURFACE = json.loads((pathlib.Path(__file__).parent / "data" / "cupy_surface.json").read_text())
IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")
_ARRAY_ATTRIBUTES = frozenset(SURFACE["ndarray"])
_UFUNC_METHODS = {name: frozenset(methods) for name, methods in SURFACE["ufunc_methods"].items()}
_SCALARS = (bool, int, float, complex, np.generic)
# reductions whose first positional parameter is the axis; CuPy refuses an axis on a 0-d array
_REDUCTIONS = {"all", "any", "argmax", "argmin", "max", "min", "mean", "prod", "std", "sum", "var", "cumsum",
               "cumprod", "nansum", "nanmax", "nanmin", "amax", "amin", "count_nonzero"}


def _refuse(obj):
    raise TypeError(f"Unsupported type {type(obj)}")


def _unwrap(obj, numpy_ok: bool = False):
    """Our arrays -> NumPy arrays, inside lists and tuples too; a NumPy array is refused unless numpy_ok."""
    kind = type(obj)
    if kind is ndarray:
        return obj._a
    if kind is np.ndarray and not numpy_ok:
        _refuse(obj)
    if kind is list or kind is tuple:
        return kind(_unwrap(o, numpy_ok) for o in obj)
    return obj


def _wrap(obj):
    """NumPy results -> our arrays; a NumPy scalar becomes a 0-d array, as CuPy returns."""
    kind = type(obj)
    if kind is np.ndarray:
        return _box(obj)
    if isinstance(obj, np.generic):
        return _box(np.asarray(obj))
    if kind is list or isinstance(obj, tuple):   # NumPy's named results (svd, eigh) are plain tuples in CuPy
        return (list if kind is list else tuple)(_wrap(o) for o in obj)
    return obj


def _box(a: np.ndarray) -> "ndarray":
    out = object.__new__(ndarray)
    out._a = a
    return out


def _check_axis(name: str, array, args: tuple, kwargs: dict, axis_at: int) -> None:
    if name not in _REDUCTIONS or getattr(array, "ndim", None) != 0:
        return
    axis = kwargs.get("axis", args[axis_at] if len(args) > axis_at else None)
    if axis is not None and axis != ():
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension 0")


def _function(fn, numpy_ok: bool = False, method_of=None, keywords=None):
    """fn with CuPy's manners; method_of: the array fn is a method of (its axis is then args[0]);
    keywords: the parameter names of CuPy's function, where its signature is known."""
    name = getattr(fn, "__name__", "function")

    def call(*args, **kwargs):
        for keyword in kwargs:
            if keywords is not None and keyword not in keywords:
                raise TypeError(f"{name}() got an unexpected keyword argument '{keyword}'")
        if method_of is None and name in _REDUCTIONS and args and isinstance(args[0], (list, tuple)):
            raise AttributeError(f"'{type(args[0]).__name__}' object has no attribute '{name}'")   # CuPy's a.sum()
        args, kwargs = _unwrap(args, numpy_ok), {k: _unwrap(v, numpy_ok) for k, v in kwargs.items()}
        if method_of is not None:
            _check_axis(name, method_of, args, kwargs, 0)
        elif args:
            _check_axis(name, args[0], args, kwargs, 1)
        out = fn(*args, **kwargs)
        if name == "diagonal":   # CuPy's diagonal is a writable view; NumPy's is read-only
            out.setflags(write=out.base.flags.writeable)
        return _wrap(out)
    call.__name__ = name
    return call


class ufunc:
    """A NumPy ufunc with CuPy's set of methods."""

    def __init__(self, name: str):
        self.__name__ = name
        self._np = getattr(np, name)
        self.nin, self.nout = self._np.nin, self._np.nout

    def __call__(self, *args, **kwargs):
        for a in args:
            if isinstance(a, (list, tuple)):
                _refuse(a)
        return _function(self._np)(*args, **kwargs)

    def _method(self, method):
        if method not in _UFUNC_METHODS.get(self.__name__, ()):
            raise NotImplementedError(f"`cupy_{self.__name__}.{method}` is not supported yet")
        return _function(getattr(self._np, method))

    def __getattr__(self, method):
        if method in ("reduce", "accumulate", "outer", "at", "reduceat"):
            return self._method(method)
        raise AttributeError(f"'ufunc' object has no attribute '{method}'")


class _Namespace(types.ModuleType):
    """A module offering `source`'s names that CuPy also has, each wrapped to CuPy's manners."""

    def __init__(self, name: str, source, allowed, keywords=None):
        super().__init__(name)
        self._source, self._allowed, self._keywords = source, frozenset(allowed), keywords or {}

    def __getattr__(self, name):
        if name.startswith("__") or name not in self._allowed or not hasattr(self._source, name):
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")
        value = getattr(self._source, name)
        if isinstance(value, np.ufunc):
            value = ufunc(name)
        elif callable(value) and not isinstance(value, type):
            value = _function(value, keywords=self._keywords.get(name))
        setattr(self, name, value)
        return value


class _Flags:
    def __init__(self, a: np.ndarray):
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = a.flags.owndata


class _Device:
    def __init__(self, index: int = 0):
        self.id = index

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def use(self):
        return None

    def synchronize(self):
        return None


def _operand(other):
    if type(other) is ndarray:
        return other._a
    if type(other) is np.ndarray:
        _refuse(other)
    return other if isinstance(other, _SCALARS) else NotImplemented


def _binary(dunder: str):
    def op(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _wrap(getattr(self._a, dunder)(other))
    return op


def _inplace(dunder: str):
    def op(self, other):
        other = _operand(other)
        if other is NotImplemented:
            return NotImplemented
        getattr(self._a, dunder)(other)
        return self
    return op


def _unary(dunder: str):
    return lambda self: _wrap(getattr(self._a, dunder)())


def _plain(dunder: str):
    return lambda self: getattr(self._a, dunder)()


class ndarray:
    """cupy.ndarray's manners over a NumPy array."""

    __slots__ = ("_a",)
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float):
        self._a = np.empty(shape, dtype)

    def __getattr__(self, name):
        if name not in _ARRAY_ATTRIBUTES or name.startswith("_"):
            raise AttributeError(f"'ndarray' object has no attribute '{name}'")
        value = getattr(self._a, name)
        if callable(value):
            return _function(value, method_of=self._a)
        return _wrap(value)

    flags = property(lambda self: _Flags(self._a))
    device = property(lambda self: _Device(0))
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)

    def get(self) -> np.ndarray:
        return self._a.copy()

    def __array__(self, *args, **kwargs):
        raise TypeError(IMPLICIT)

    def __array_ufunc__(self, np_ufunc, method, *inputs, **kwargs):
        if np_ufunc.__name__ not in _UFUNC_METHODS:
            return NotImplemented
        wrapped = ufunc(np_ufunc.__name__)
        return (wrapped if method == "__call__" else wrapped._method(method))(*inputs, **kwargs)

    def __array_function__(self, func, types_, args, kwargs):
        module = {"numpy": cupy, "numpy.linalg": cupy.linalg, "numpy.fft": cupy.fft}.get(func.__module__)
        found = getattr(module, func.__name__, None) if module is not None else None
        return NotImplemented if found is None else found(*args, **kwargs)

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, numpy_ok=True)])

    def __setitem__(self, key, value):
        if type(value) is np.ndarray and value.ndim:
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a[_unwrap(key, numpy_ok=True)] = _unwrap(value, numpy_ok=True)

    def __iter__(self):
        return (_wrap(row) for row in self._a)

    def __copy__(self):
        return _box(self._a.copy())

    def __deepcopy__(self, memo):
        return _box(self._a.copy())

    def __reduce__(self):
        return (_box, (self._a,))

    for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
                  "lshift", "rshift", "divmod", "lt", "le", "gt", "ge", "eq", "ne"):
        locals()[f"__{_name}__"] = _binary(f"__{_name}__")
        if _name not in ("lt", "le", "gt", "ge", "eq", "ne"):
            locals()[f"__r{_name}__"] = _binary(f"__r{_name}__")
        if _name not in ("lt", "le", "gt", "ge", "eq", "ne", "divmod"):
            locals()[f"__i{_name}__"] = _inplace(f"__i{_name}__")
    for _name in ("neg", "pos", "abs", "invert"):
        locals()[f"__{_name}__"] = _unary(f"__{_name}__")
    for _name in ("len", "bool", "float", "int", "complex", "repr", "str"):   # plain Python values, as CuPy's
        locals()[f"__{_name}__"] = _plain(f"__{_name}__")
    del _name


class _Cuda(types.ModuleType):
    Device = _Device

    class runtime:
        @staticmethod
        def getDeviceCount() -> int:
            return 1


class _StrideTricks(types.ModuleType):
    def __init__(self):
        super().__init__("cupy.lib.stride_tricks")
        self.as_strided = _function(np.lib.stride_tricks.as_strided)
        self.sliding_window_view = _function(np.lib.stride_tricks.sliding_window_view)


cupy = _Namespace("cupy", np, SURFACE["names"], SURFACE["keywords"])
cupy.ndarray = ndarray
cupy.ufunc = ufunc
cupy.asarray = _function(np.asarray, numpy_ok=True)
cupy.array = _function(np.array, numpy_ok=True)
cupy.asnumpy = lambda a: a.get() if type(a) is ndarray else np.asarray(a)
cupy.get_array_module = lambda *arrays: cupy if any(type(a) is ndarray for a in arrays) else np
cupy.cuda = _Cuda("cupy.cuda")
cupy.linalg = _Namespace("cupy.linalg", np.linalg, SURFACE["linalg"], SURFACE["linalg_keywords"])
cupy.fft = _Namespace("cupy.fft", np.fft, SURFACE["fft"])
cupy.random = _Namespace("cupy.random", np.random, SURFACE["random"])
cupy.lib = types.ModuleType("cupy.lib")
cupy.lib.stride_tricks = _StrideTricks()


# the cupyx.scipy.special names gradviz's special functions call on a GPU (read from their code),
# computed by gradviz's CPU implementations
special = _Namespace("cupyx.scipy.special", types.SimpleNamespace(**_cpu_special.ON_GPU),
                     SURFACE["cupyx.scipy.special"])
