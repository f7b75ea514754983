"""torch.testing.assert_close: are two results close, and if not, torch's AssertionError saying
where and by how much.

Inputs pair up as torch pairs them: sequences and mappings item by item, then each pair as None,
bools, Python (or NumPy) numbers, or tensor-likes (Tensors, NumPy arrays) of one kind. Tolerances
default by dtype (torch's table); tensors must match in shape, and in dtype and device unless told
not to check; values are close when |actual − expected| ≤ atol + rtol · |expected|. The messages are
torch's, word for word."""
from __future__ import annotations

import cmath
import collections.abc

import numpy as np

from . import backend
from .dtypes import from_numpy_dtype, promote_types
from .tensor import Tensor
from .dtypes import Size

__all__ = ["assert_close"]

# {dtype name: (rtol, atol)}; every other dtype compares exactly
_TOLERANCES = {"float16": (0.001, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """One failed pair: the error type and message torch raises for it, and where it sits."""

    def __init__(self, kind: type, message: str, id: tuple = ()):
        super().__init__(message)
        self.kind, self.message, self.id = kind, message, id

    def to_error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.id:
            text += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This kind of pair does not take these inputs: try the next kind."""


def _tolerances(dtype_names, rtol, atol, id) -> tuple:
    if (rtol is None) ^ (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(name, (0.0, 0.0)) for name in dtype_names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _difference_message(identifier: str, extra: str, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind: str, diff, idx, tol) -> str:
        if idx is None:
            text = f"{kind.title()} difference: {diff}"
        else:
            text = f"Greatest {kind} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"
    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    text += line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return text.strip()


def _scalar_message(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _difference_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff,
                               None, rtol)


def _tensor_message(actual: np.ndarray, expected: np.ndarray, matches: np.ndarray, rtol, atol) -> str:
    """torch's statistics: the mismatches, and the greatest absolute and relative differences among
    them (computed in the compared dtype, integers as int64) with the first index of each."""
    total = matches.size
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e = actual.reshape(-1), expected.reshape(-1)
    if a.dtype.kind not in "fc":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[matches.reshape(-1)] = 0
        scale = np.abs(e)
        if abs_diff.dtype.kind != "f":   # integer / integer is a float32 tensor in torch
            rel_diff = abs_diff.astype(np.float32) / scale.astype(np.float32)
        else:
            rel_diff = abs_diff / scale
        rel_diff[matches.reshape(-1)] = 0

    def greatest(values):
        at = int(np.argmax(values))   # the first maximum, or the first NaN, as torch.max
        return values[at].item(), tuple(int(i) for i in np.unravel_index(at, matches.shape)) if matches.ndim else ()
    abs_value, abs_idx = greatest(abs_diff)
    rel_value, rel_idx = greatest(rel_diff)
    return _difference_message("Tensor-likes", extra, abs_value, abs_idx, atol, rel_value, rel_idx, rtol)


def _none_pair(actual, expected, id, **options):
    if not (actual is None or expected is None):
        raise _Unsupported
    if not (actual is None and expected is None):
        raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", id)


def _bool_pair(actual, expected, id, **options):
    if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)


def _number_pair(actual, expected, id, rtol=None, atol=None, equal_nan=False, check_dtype=True, **options):
    if not all(isinstance(x, (int, float, complex, np.number)) and not isinstance(x, (bool, np.bool_))
               for x in (actual, expected)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol, id)
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id)
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_message(actual, expected, rtol, atol), id)


def _as_array(value):
    return value._data if isinstance(value, Tensor) else value


def _tensor_pair(actual, expected, id, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, **options):
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    if not isinstance(actual, (Tensor, np.ndarray)):
        raise _Unsupported
    a, e = (np.asarray(x) if isinstance(x, np.ndarray) else x for x in (actual, expected))
    devices = [x.device if isinstance(x, Tensor) else backend.device("cpu") for x in (actual, expected)]
    a_data, e_data = _as_array(a), _as_array(e)
    rtol, atol = _tolerances([a_data.dtype.name, e_data.dtype.name], rtol, atol, id)

    def mismatch(attribute, left, right):
        raise _Mismatch(AssertionError, f"The values for attribute '{attribute}' do not match: {left} != {right}.", id)
    if tuple(a_data.shape) != tuple(e_data.shape):
        mismatch("shape", _size(a), _size(e))
    if check_device and devices[0] != devices[1]:
        mismatch("device", devices[0], devices[1])
    if check_dtype and a_data.dtype != e_data.dtype:
        mismatch("dtype", from_numpy_dtype(a_data.dtype), from_numpy_dtype(e_data.dtype))
    a_data, e_data = backend.to_numpy(a_data), backend.to_numpy(e_data)
    if a_data.dtype != e_data.dtype:
        common = promote_types(a_data.dtype, e_data.dtype)
        a_data, e_data = a_data.astype(common), e_data.astype(common)
    if a_data.dtype.kind in "fc":
        with np.errstate(all="ignore"):
            matches = np.isclose(a_data, e_data, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        matches = a_data == e_data if rtol == 0 and atol == 0 else \
            np.abs(a_data.astype(np.float64) - e_data) <= atol + rtol * np.abs(e_data.astype(np.float64))
    if matches.all():
        return
    if a_data.ndim == 0:
        message = _scalar_message(a_data.item(), e_data.item(), rtol, atol)
    else:
        message = _tensor_message(a_data, e_data, np.asarray(matches), rtol, atol)
    raise _Mismatch(AssertionError, message, id)


def _size(value):
    return Size(value.shape)


_PAIRS = (_none_pair, _bool_pair, _number_pair, _tensor_pair)


def _type_repr(value) -> str:
    """type(value) as torch's message shows it: gradviz's Tensor and Parameter are torch's there."""
    if type(value) is Tensor:
        return "<class 'torch.Tensor'>"
    if isinstance(value, Tensor) and type(value).__name__ == "Parameter":
        return "<class 'torch.nn.parameter.Parameter'>"
    return str(type(value))


def _pairs(actual, expected, id: tuple, options: dict) -> list:
    """The comparisons the inputs make, in order: sequences and mappings item by item."""
    sequence = collections.abc.Sequence
    if isinstance(actual, sequence) and not isinstance(actual, str) and isinstance(expected, sequence) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                            id)
        return [pair for i in range(len(actual)) for pair in _pairs(actual[i], expected[i], (*id, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys, other = set(actual.keys()), set(expected.keys())
        if keys != other:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {sorted(other - keys)}\n"
                                            f"Additional keys in the actual mapping: {sorted(keys - other)}", id)
        try:
            keys = sorted(keys)
        except Exception:
            pass
        return [pair for key in keys for pair in _pairs(actual[key], expected[key], (*id, key), options)]
    return [(actual, expected, id)]


def _compare(actual, expected, id: tuple, options: dict) -> None:
    for pair in _PAIRS:
        try:
            return pair(actual, expected, id, **options)
        except _Unsupported:
            continue
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {_type_repr(actual)} and "
                               f"{_type_repr(expected)}.", id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise torch's AssertionError unless actual and expected are close (see the module's text);
    `msg` replaces the message, or (a callable) rewrites it."""
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype)
    try:
        pairs = _pairs(actual, expected, (), options)
        # torch sets every pair up before it compares any: a type no pair takes fails first
        for a, e, id in pairs:
            _check_supported(a, e, id, options)
        for a, e, id in pairs:
            _compare(a, e, id, options)
    except _Mismatch as failure:
        raise failure.to_error(msg) from None


def _check_supported(actual, expected, id, options) -> None:
    """The errors torch raises while it sets pairs up: no kind of pair takes the inputs, or a
    tolerance is given without the other."""
    for pair in _PAIRS:
        try:
            pair(actual, expected, id, **options)
            return
        except _Unsupported:
            continue
        except _Mismatch as failure:
            if failure.kind is AssertionError:   # a comparison failure: reported in the second pass
                return
            raise
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {_type_repr(actual)} and "
                               f"{_type_repr(expected)}.", id)
