"""histc, histogram and bincount on Tensors. Counts have no gradient: these record no node, but
histogram of a tensor that requires grad, whose outputs torch gives a node that fails in backward
(NotImplemented, gradviz.ops.search's record). They count on the host, in NumPy, and hand the
counts back on the input's device."""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import backend
from ..autograd.apply import apply
from ..autograd.grad_mode import is_grad_enabled
from ..ops.search import HISTOGRAM
from ..tensor import Tensor
from ..creation import linspace
from ..dtypes import from_numpy_dtype, kernel_missing
from .public import public


_SCALAR = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
           "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}

histogram_result = namedtuple("histogram", ["hist", "bin_edges"])
histogram_result.__module__ = "torch.return_types"
histogram_result.__repr__ = lambda self: (f"torch.return_types.histogram(\nhist={self.hist!r},\n"
                                          f"bin_edges={self.bin_edges!r})")


def _tensor(data, like):
    """Counts as a Tensor on the device of `like`."""
    return Tensor._make(backend.to_device(data, like.device))


def _counts(values: np.ndarray, edges: np.ndarray, weights=None, uniform: bool = True) -> np.ndarray:
    """Values falling in [edges[i], edges[i+1]) (the last bin closed), as torch counts them:
    for equal bins the bin from the linear position, corrected by one where rounding put it
    off; for given edges a binary search."""
    lo, hi = edges[0], edges[-1]
    n = len(edges) - 1
    keep = (values >= lo) & (values <= hi)   # nan fails both
    v = values[keep]
    w = None if weights is None else weights[keep]
    if not uniform:
        pos = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, n - 1)
        return np.bincount(pos, weights=w, minlength=n)[:n]
    if hi > lo:
        pos = np.floor((v - lo) / (hi - lo) * n).astype(np.int64)
    else:
        pos = np.zeros(v.shape, dtype=np.int64)
    pos = np.clip(pos, 0, n - 1)
    pos = np.where((pos > 0) & (edges[pos] > v), pos - 1, pos)
    pos = np.where((pos < n - 1) & (edges[np.minimum(pos + 1, n)] <= v), pos + 1, pos)
    return np.bincount(pos, weights=w, minlength=n)[:n]


def _linear_edges(lo: float, hi: float, bins: int, dtype) -> np.ndarray:
    return linspace(lo, hi, bins + 1, dtype=_torch_dtype(dtype), device="cpu")._data


def _torch_dtype(np_dtype):
    return from_numpy_dtype(np_dtype)


def _float_input(input, name: str) -> np.ndarray:
    a = backend.to_numpy(input._data)
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"{name}\" not implemented for '{_SCALAR[a.dtype.name]}'")
    return a


@public(method=True, out=True)
def histc(input, bins: int = 100, min: float = 0, max: float = 0):
    """Counts in `bins` equal bins over [min, max] (the data's own range when both are equal). torch's
    checks in its order: the bins, a finite range (an inf or NaN in the data makes it infinite), min
    below max; then its kernels' dtypes (a bool tensor has no linspace for the edges, an integer one no
    histogram)."""
    a = backend.to_numpy(input._data)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if a.dtype.kind == "b":
        raise kernel_missing("linspace_cpu", a.dtype)
    a = _float_input(input, "histogram_cpu")
    edges = _linear_edges(lo, hi, bins, a.dtype)
    return _tensor(_counts(a.reshape(-1), edges).astype(a.dtype), input)


@public(method=True, out=True)
def histogram(input, bins=100, *, range=None, weight=None, density: bool = False):
    """(hist, bin_edges): counts (or weights, or a density) per bin; `bins` is a count or the edges."""
    a = _float_input(input, "histogramdd")
    if isinstance(bins, Tensor):
        edges = backend.to_numpy(bins._data).astype(a.dtype)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        else:
            lo, hi = (float(a.min()), float(a.max())) if a.size else (0.0, 1.0)   # torch's range for no data
        if lo > hi:
            raise ValueError(f"torch.histogram(): min should not exceed max, but got min {lo} max {hi}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _linear_edges(lo, hi, int(bins), a.dtype)
    w = None if weight is None else backend.to_numpy(weight._data).reshape(-1).astype(np.float64)
    hist = _counts(a.reshape(-1), edges, w, uniform=not isinstance(bins, Tensor)).astype(a.dtype)
    if density:
        widths = np.diff(edges)
        total = hist.sum()
        with np.errstate(all="ignore"):   # no data: torch's density is NaN, silently
            hist = (hist / (total * widths)).astype(a.dtype)
    if input.requires_grad and is_grad_enabled():
        on_device = (backend.to_device(hist, input.device), backend.to_device(edges.copy(), input.device))
        return histogram_result(*apply(HISTOGRAM, (input,), on_device))
    return histogram_result(_tensor(hist, input), _tensor(edges.copy(), input))


@public(method=True, out=True)
def bincount(input, weights=None, minlength: int = 0):
    """How often each non-negative integer occurs (or the sum of its weights)."""
    a = backend.to_numpy(input._data)
    if a.dtype.kind in "fb":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_SCALAR[a.dtype.name]}'")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _tensor(np.bincount(a.astype(np.int64), minlength=minlength).astype(np.int64), input)
    w = backend.to_numpy(weights._data)
    dtype = np.float32 if w.dtype == np.float32 else np.float64   # torch: float weights keep float, others double
    counts = np.bincount(a.astype(np.int64), weights=w.astype(np.float64), minlength=minlength)
    return _tensor(counts.astype(dtype), input)
