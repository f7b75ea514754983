"""Preview: what a view may know about a tensor (shape, dtype, device, its values or a
summary and a heatmap of block means), taken when an event is emitted so that later in-place
writes cannot change it, and its JSON codec (non-finite floats as strings, complex numbers as
[re, im] pairs). `as_matrix` and `block_means` are the 2-D form every grid and heatmap draws.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import backend

PREVIEW_MAX = 64   # tensors up to this many elements keep their values (an 8×8 grid in the step panel)
THUMB_CELLS = 16   # larger ones keep a heatmap of at most 16×16 block means
CONSTANT_VALUES = 8   # a tensor an op used without its gradient (the y of x * y) keeps its values up to this size


@dataclass
class Preview:
    """What a label can say about a tensor: shape, dtype, and its values or a summary."""
    shape: tuple
    dtype: str
    device: str = "cpu"
    values: np.ndarray | None = None     # a copy, when numel <= PREVIEW_MAX
    stats: tuple | None = None           # (min, mean, max) of any numeric tensor
    thumb: np.ndarray | None = None      # block means (at most THUMB_CELLS a side), when values are not kept

    @classmethod
    def of(cls, array, limit: int = PREVIEW_MAX) -> "Preview | None":
        if array is None:
            return None
        array = getattr(array, "_data", array)   # a gradviz Tensor (a gradient under create_graph)
        if not hasattr(array, "shape"):
            array = np.asarray(array)
        dev = str(backend.device_of(array))
        a = backend.to_numpy(array)
        shape = tuple(map(int, a.shape))
        dtype = _dtype_name(a.dtype)
        if not a.size or a.dtype.kind not in "fiub":
            return cls(shape, dtype, dev, values=np.array(a, copy=True) if a.size <= limit else None)
        af = a.astype(np.float64)
        with np.errstate(all="ignore"):   # the reductions ndarray.min/mean/max run, without their Python layer
            stats = (float(_MIN(af, axis=None)), float(_SUM(af, axis=None) / af.size), float(_MAX(af, axis=None)))
        if a.size <= limit:
            return cls(shape, dtype, dev, values=np.array(a, copy=True), stats=stats)
        return cls(shape, dtype, dev, stats=stats, thumb=block_means(af))

    def extremes(self) -> tuple | None:
        """(min, max) of a numeric tensor's values (what an edge's width reads), or None."""
        if self.stats is None:
            return None
        return self.stats[0], self.stats[2]

    def to_json(self) -> dict:
        out: dict = {"shape": list(self.shape), "dtype": self.dtype, "device": self.device}
        if self.values is not None:
            out["values"] = _json_values(self.values)
        if self.stats is not None:
            out["stats"] = list(self.stats)
        if self.thumb is not None:
            out["thumb"] = {"shape": list(self.thumb.shape), "values": _json_values(self.thumb)}
        return out

    @classmethod
    def from_json(cls, data: dict | None) -> "Preview | None":
        if data is None:
            return None
        values = None
        if "values" in data:
            dtype = data["dtype"] if data["dtype"] in _NUMPY_DTYPES else "float64"
            raw = data["values"]
            values = np.array(_from_json_values(raw), dtype=dtype).reshape(tuple(data["shape"]))
        stats = tuple(data["stats"]) if data.get("stats") is not None else None
        thumb = data.get("thumb")
        if thumb is not None:
            thumb = np.array(_from_json_values(thumb["values"]), dtype=np.float64).reshape(tuple(thumb["shape"]))
        return cls(tuple(data["shape"]), data["dtype"], data.get("device", "cpu"), values, stats, thumb)


def as_matrix(a: np.ndarray) -> np.ndarray:
    """A tensor as the 2-D array a grid or heatmap draws: () -> 1×1, (n,) -> 1×n, (..., c) -> (rows, c)."""
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])   # not -1: a (5, 0) tensor has 0 elements


def block_means(a: np.ndarray, cells: int = THUMB_CELLS) -> np.ndarray:
    """The matrix of `a` cut into at most cells×cells blocks, each its mean over finite values."""
    m = as_matrix(a)
    finite = np.isfinite(m)
    clean = np.where(finite, m, 0.0)
    if m.shape[0] <= cells and m.shape[1] <= cells:    # a block per entry: the means are the entries
        return clean.astype(np.float64, copy=False)
    # the blocks of np.array_split: the first (n % k) one longer; summed a block at a time by reduceat
    rows, cols = _starts(m.shape[0], cells), _starts(m.shape[1], cells)
    sums = np.add.reduceat(np.add.reduceat(clean, rows, axis=0), cols, axis=1)
    if _ALL(finite, axis=None):    # the usual case: every block counts all its cells
        return sums / _cells(m.shape[0], m.shape[1], cells)
    counts = np.add.reduceat(np.add.reduceat(finite.astype(np.int64), rows, axis=0), cols, axis=1)
    with np.errstate(all="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)


_MIN, _SUM, _MAX = np.minimum.reduce, np.add.reduce, np.maximum.reduce


@lru_cache(maxsize=64)
def _dtype_name(dtype) -> str:
    return str(dtype)     # str(dtype) is computed anew each time, and a big graph asks it for every tensor


_ALL = np.logical_and.reduce


@lru_cache(maxsize=256)
def _cells(n_rows: int, n_cols: int, cells: int) -> np.ndarray:
    """How many cells each block of an n_rows×n_cols matrix holds (blocks as `_starts` cuts them)."""
    rows = np.diff(np.append(_starts(n_rows, cells), n_rows))
    cols = np.diff(np.append(_starts(n_cols, cells), n_cols))
    return np.outer(rows, cols)


@lru_cache(maxsize=1024)
def _starts(n: int, cells: int) -> np.ndarray:
    """Where each of min(cells, n) near-equal blocks of n items starts (as np.array_split cuts them)."""
    k = min(cells, n)
    sizes = np.full(k, n // k)
    sizes[:n % k] += 1
    return np.concatenate(([0], np.cumsum(sizes)[:-1]))


_NUMPY_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "bool", "complex64", "complex128"}


def _json_values(values: np.ndarray):
    """Nested lists JSON can hold: non-finite floats as strings, complex as [re, im] pairs."""
    a = np.asarray(values)
    if a.dtype.kind == "c":
        return [[float(v.real), float(v.imag)] for v in a.ravel()]
    if a.dtype.kind == "f":
        return [_json_float(float(v)) for v in a.ravel()]
    return [v.item() for v in a.ravel()]


def _json_float(v: float):
    return v if np.isfinite(v) else str(v)


def _from_json_values(raw: list) -> list:
    return [complex(*v) if isinstance(v, list) else (float(v) if isinstance(v, str) else v) for v in raw]
