"""Tensor creation (tensor, zeros, arange, randn, ...); random tensors draw from gradviz.random."""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

from ._warn import warn
from . import backend, dtypes, libm
from ._args import check_number, check_tensor, int_sizes, invalid_arguments, type_name
from ._calling import numpy_names
from . import random as _random
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,  # noqa: F401
                     set_rng_state)
from .tensor import Tensor


def _dtype_arg(fn: str, dtype) -> None:
    """PyTorch's TypeError for a dtype= that is not a torch dtype (a string, a NumPy type, ...);
    Python's float, int, bool and complex stand for float64, int64, bool and complex128, as in torch."""
    if dtype is not None and not isinstance(dtype, dtypes.dtype) and dtype not in (float, int, bool, complex):
        raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")


def _size(size, keyword=None, negative: str | None = None, fn: str | None = None) -> tuple:
    """The shape given as sizes, one sequence or size=; `fn` names a function that must be given one."""
    if fn is not None and not size and keyword is None:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    if keyword is not None:
        if size:
            raise TypeError("size given both as positional arguments and as size=")
        size = (keyword,)
    size = int_sizes(fn or "empty", "size", size, keyword=isinstance(keyword, (tuple, list)))
    for s in size:
        if s < 0:
            raise RuntimeError(negative or f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return size


def _finish(arr, dtype, device, requires_grad):
    if dtype is not None:
        arr = arr.astype(dtypes.as_np(dtype), copy=False)
    if device is None:
        device = backend.default_device()   # set_default_device / `with torch.device(...)`
    if device is not None and backend.device(device).type != "cpu":
        arr = backend.to_device(arr, device)
    t = Tensor._make(arr)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def tensor(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    _dtype_arg("tensor", dtype)
    if isinstance(data, Tensor):
        warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
             "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")
        data = data._data.copy()
    elif isinstance(data, np.ndarray):
        data = data.copy()
    return Tensor._from_data(data, dtype=dtype, device=device, requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return Tensor._from_data(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """torch.asarray: a tensor or a NumPy array is shared (not copied) when its dtype and device
    already fit and copy is not True; anything else is converted as torch.tensor converts it."""
    if isinstance(obj, Tensor):
        t = obj if dtype is None and device is None else obj.to(dtype=dtype, device=device)
        t = t.clone() if copy and t is obj else t
    elif isinstance(obj, np.ndarray) and not copy and device is None and (
            dtype is None or dtypes.as_np(dtype) == obj.dtype):
        t = from_numpy(obj)
    else:
        t = Tensor._from_data(obj.copy() if copy and isinstance(obj, np.ndarray) else obj, dtype=dtype, device=device)
    return t.requires_grad_(True) if requires_grad else t


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """A 0-d tensor holding s, of the default float dtype unless told otherwise (scalar_tensor(3) is 3.)."""
    dtypes.check_layout("scalar_tensor", layout)
    check_number("scalar_tensor", "s", s, 1)
    return _filled(s, (), dtype or dtypes.get_default_dtype(), device, requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """Shares memory with `array`, as torch.from_numpy does."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _filled(value, size: tuple, dtype, device, requires_grad):
    np_dtype = dtypes.as_np(dtype) if dtype is not None else dtypes.get_default_dtype().np
    return _finish(np.full(size, dtypes.fitted(value, np_dtype), dtype=np_dtype), None, device, requires_grad)


def new_filled(fn: str, value, sizes: tuple, dtype, device, requires_grad) -> Tensor:
    """Tensor.new_zeros/new_ones/new_empty/new_full: dtype and device default to the tensor's."""
    _dtype_arg(fn, dtype)
    check_number(fn, "fill_value", value, 2)
    return _filled(value, _size(sizes, fn=fn), dtype, device, requires_grad)


def zeros(*sizes, size=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    dtypes.check_layout("zeros", layout)
    _dtype_arg("zeros", dtype)
    # ATen's zeros checks the sizes itself, in its own words, before empty() would
    return _filled(0, _size(sizes, size, "zeros: Dimension size must be non-negative.", "zeros"), dtype, device,
                   requires_grad)


def ones(*sizes, size=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    dtypes.check_layout("ones", layout)
    _dtype_arg("ones", dtype)
    return _filled(1, _size(sizes, size, fn="ones"), dtype, device, requires_grad)


def empty(*sizes, size=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    dtypes.check_layout("empty", layout)
    _dtype_arg("empty", dtype)
    return _filled(0, _size(sizes, size, fn="empty"), dtype, device, requires_grad)


_NO_FILL = object()   # full(size) without a fill value: torch's TypeError, not Python's


def full(size, fill_value=_NO_FILL, dtype=None, device=None, requires_grad=False, *, layout=None) -> Tensor:
    dtypes.check_layout("full", layout)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type_name(size)}")
    if fill_value is _NO_FILL:
        raise TypeError('full() missing 1 required positional arguments: "fill_value"')
    check_number("full", "fill_value", fill_value, 2)
    _dtype_arg("full", dtype)
    if dtype is None:
        dtype = dtypes.from_numpy_dtype(dtypes.result_type((), (fill_value,)))
    return _filled(fill_value, _size((tuple(size),), fn="full"), dtype, device, requires_grad)


@numpy_names
def zeros_like(input, dtype=None, device=None, requires_grad=False, *, layout=None, memory_format=None) -> Tensor:
    dtypes.check_layout("zeros_like", layout)
    dtypes.check_memory_format(memory_format, input.ndim)
    check_tensor("zeros_like", "input", input, 1)
    _dtype_arg("zeros_like", dtype)
    return zeros(tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


@numpy_names
def ones_like(input, dtype=None, device=None, requires_grad=False, *, layout=None, memory_format=None) -> Tensor:
    dtypes.check_layout("ones_like", layout)
    dtypes.check_memory_format(memory_format, input.ndim)
    check_tensor("ones_like", "input", input, 1)
    _dtype_arg("ones_like", dtype)
    return ones(tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


@numpy_names
def empty_like(input, dtype=None, device=None, requires_grad=False, *, layout=None, memory_format=None) -> Tensor:
    dtypes.check_layout("empty_like", layout)
    dtypes.check_memory_format(memory_format, input.ndim)
    check_tensor("empty_like", "input", input, 1)
    return zeros_like(input, dtype, device, requires_grad)


@numpy_names
def full_like(input, fill_value, dtype=None, device=None, requires_grad=False, *, layout=None,
              memory_format=None) -> Tensor:
    dtypes.check_layout("full_like", layout)
    dtypes.check_memory_format(memory_format, input.ndim)
    check_tensor("full_like", "input", input, 1)
    _dtype_arg("full_like", dtype)
    check_number("full_like", "fill_value", fill_value, 2)
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


# -- ranges, computed as torch's CPU kernels compute them (same last bits) ----------------------------
_GRAIN = 32768            # at::internal::GRAIN_SIZE: parallel_for splits longer ranges across threads
_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}     # AVX2 vector lanes


def _scalar(x):
    return x.item() if isinstance(x, Tensor) else x


def _threads() -> int:
    """torch's intra-op thread count (the per-thread chunks of a long arange start new vectors)."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)


def _fma(a, b, c):
    return libm.fma64(np.asarray(a, dtype=np.float64), b, c)


def _arange_float(start: float, step: float, n: int, np_dtype) -> np.ndarray:
    """start + step * i in doubles, fused as torch's build fuses it. The vectorised loop (two vectors
    at a time, per thread chunk) computes each vector's base that way, rounds it to the dtype, and
    adds k * step for lane k; the scalar tail uses the formula directly."""
    idx = np.arange(n, dtype=np.float64)
    out = _fma(idx, step, start)
    lanes = _LANES.get(np.dtype(np_dtype))
    if lanes and n:
        size = -(-n // min(_threads(), -(-n // _GRAIN)))
        for begin in range(0, n, size):
            end = min(n, begin + size)
            vec_end = begin + (end - begin) // (2 * lanes) * 2 * lanes
            lane = (np.arange(vec_end - begin) % lanes).astype(np.float64)
            base = _fma(idx[begin:vec_end] - lane, step, start).astype(np_dtype).astype(np.float64)
            out[begin:vec_end] = _fma(lane, step, base)
    return out.astype(np_dtype)


def _check_range(xstart, xend, xstep) -> None:
    """torch's checks of a range's bounds and step (arange and range)."""
    if xstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xstart) and math.isfinite(xend)):
        raise RuntimeError(f"unsupported range: {xstart:g} -> {xend:g}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange(start, end=None, step=1, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    dtypes.check_layout("arange", layout)
    if end is None and not isinstance(start, Tensor):
        check_number("arange", "end", start, 1)
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = dtypes.from_numpy_dtype(dtypes.result_type((), (start, end, step)))
    np_dtype = dtypes.as_np(dtype)
    if np_dtype.kind == "b":
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    integral = np_dtype.kind in "iub"
    if np_dtype == np.int64:          # int64 accumulates in int64: the bounds are truncated first
        if step != 0 and int(step) == 0:
            raise ValueError("step must be nonzero")
        xstart, xend, xstep = int(start), int(end), int(step)
    else:                             # other dtypes check and size the range in doubles
        xstart, xend, xstep = float(start), float(end), float(step)
    _check_range(xstart, xend, xstep)
    if np_dtype == np.int64:
        n = (xend - xstart + xstep - (1 if xstep > 0 else -1)) // xstep
    else:
        n = math.ceil((xend - xstart) / xstep)
    if integral:
        arr = (int(start) + int(step) * np.arange(n, dtype=np.int64)).astype(np_dtype)
    else:
        arr = _arange_float(xstart, xstep, n, np_dtype)
    return _finish(arr, None, device, requires_grad)


_RANGE_DEPRECATED = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                     "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                     "[start, end).")


def inclusive_range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
                    requires_grad=False) -> Tensor:
    """torch.range (deprecated, still in older course material): start, start + step, ... up to and
    including end, of the default float dtype, each value start + i·step in doubles; warns as torch does."""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warn(_RANGE_DEPRECATED)
    dtypes.check_layout("range", layout)
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    xstart, xend, xstep = float(start), float(end), float(step)
    _check_range(xstart, xend, xstep)
    n = int(math.floor((xend - xstart) / xstep)) + 1
    np_dtype = dtypes.as_np(dtype if dtype is not None else dtypes.get_default_dtype())
    arr = (xstart + xstep * np.arange(n, dtype=np.float64)).astype(np_dtype)
    return _finish(arr, None, device, requires_grad)


def _linear_points(start, end, steps: int, np_dtype) -> np.ndarray:
    """torch's linspace kernel: start + step * i for the first half, end − step * (steps − 1 − i)
    for the second, in the dtype (doubles for integer dtypes, then truncated), fused."""
    np_dtype = np.dtype(np_dtype)
    work = np.dtype(np.float64) if np_dtype.kind in "iub" else np_dtype
    s, e = (work.type(int(v)) if np_dtype.kind in "iub" else work.type(v) for v in (start, end))
    if steps == 1:
        return np.array([s]).astype(np_dtype)
    step = (e - s) / work.type(steps - 1)
    half = steps // 2
    first = np.arange(half).astype(work)
    second = (steps - 1 - np.arange(half, steps)).astype(work)
    out = np.concatenate([libm.fma(first, step, s, work), libm.fma(second, -step, e, work)]) if steps \
        else np.empty(0, work)
    return out.astype(work).astype(np_dtype)


_NO_STEPS = object()


def _signatures(base: str) -> tuple:
    """linspace's (or logspace's, with its base) four signatures as torch's parser lists them."""
    return tuple(f"{a} start, {b} end, int steps, {base}*, Tensor out = None, torch.dtype dtype = None, "
                 "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
                 "bool requires_grad = False"
                 for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number")))


def _steps(fn: str, start, end, steps, base: str = "") -> int:
    """The number of points; torch's list of signatures when it is left out or None."""
    if steps is _NO_STEPS or steps is None:
        given = (start, end) if steps is _NO_STEPS else (start, end, None)
        raise TypeError(invalid_arguments(fn, given, {}, _signatures(base)).args[0] + "\n")
    if isinstance(steps, bool) or not hasattr(type(steps), "__index__"):   # 2.5 or 2.0 steps: no signature takes it
        raise TypeError(invalid_arguments(fn, (start, end, steps), {}, _signatures(base)).args[0] + "\n")
    if isinstance(start, Tensor) and start.ndim or isinstance(end, Tensor) and end.ndim:
        dims = [t.ndim if isinstance(t, Tensor) else 0 for t in (start, end)]
        raise RuntimeError(f"{fn} only supports 0-dimensional start and end tensors, but got start with {dims[0]} "
                           f"dimension(s) and end with {dims[1]} dimension(s).")
    return int(_scalar(steps))


def linspace(start, end, steps=_NO_STEPS, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    dtypes.check_layout("linspace", layout)
    steps = _steps("linspace", start, end, steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = dtypes.as_np(dtype or dtypes.get_default_dtype())
    return _finish(_linear_points(_scalar(start), _scalar(end), steps, np_dtype), None, device, requires_grad)


def logspace(start, end, steps=_NO_STEPS, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False) -> Tensor:
    """torch's logspace (plain C++, no fused steps): ends in the dtype, their difference as a double
    step, exponents start + step * i (or end − step * (steps − 1 − i) from halfway) in doubles,
    pow(base, x) in doubles, then the dtype."""
    dtypes.check_layout("logspace", layout)
    steps = _steps("logspace", start, end, steps, "float base = 10.0, ")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = dtypes.as_np(dtype or dtypes.get_default_dtype())
    start, end = _scalar(start), _scalar(end)
    if steps == 1:
        arr = np.array([math.pow(float(base), float(start))]).astype(np_dtype)
        return _finish(arr, None, device, requires_grad)
    s, e = (np_dtype.type(int(v) if np_dtype.kind in "iub" else v) for v in (start, end))
    step = float(e - s) / (steps - 1) if steps else 0.0
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    exponents = np.where(i < half, float(s) + step * i, float(e) - step * (steps - i - 1))
    with np.errstate(invalid="ignore", over="ignore"):   # out-of-range integer casts, as C's
        arr = libm.power(float(base), exponents).astype(np_dtype)
    return _finish(arr, None, device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False, *, layout=None) -> Tensor:
    dtypes.check_layout("eye", layout)
    _dtype_arg("eye", dtype)
    if isinstance(n, bool) or not hasattr(type(n), "__index__"):
        raise TypeError(f"eye(): argument 'n' (position 1) must be int, not {type_name(n)}")
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    arr = np.eye(n, m, dtype=dtypes.as_np(dtype) if dtype else dtypes.get_default_dtype().np)
    return _finish(arr, None, device, requires_grad)


# -- random tensors: torch's CPU streams (gradviz.random), then moved to the device ------------
_KERNEL_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                 "float16": "Half", "float32": "Float", "float64": "Double"}


def _floating(dtype, kernel: str) -> dtypes.dtype:
    d = dtype if isinstance(dtype, dtypes.dtype) else (dtypes.from_numpy_dtype(dtypes.as_np(dtype)) if dtype
                                                       else dtypes.get_default_dtype())
    if not d.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_KERNEL_NAMES[d.name]}\'')
    return d


def _drawn(arr, device, requires_grad) -> Tensor:
    return _finish(arr, None, device, requires_grad)


_DRAW_SIGNATURES = tuple(f"tuple of ints size, *, {g}Tensor out = None, torch.dtype dtype = None, torch.layout layout = "
                         "None, torch.device device = None, bool pin_memory = False, bool requires_grad = False"
                         for g in ("torch.Generator generator, ", ""))


def _drawn_size(fn: str, sizes, size, *keywords) -> tuple:
    """rand's and randn's shape; called with nothing at all, torch lists their signatures."""
    if not sizes and size is None and all(k is None or k is False for k in keywords):
        raise TypeError(invalid_arguments(fn, (), {}, _DRAW_SIGNATURES).args[0] + "\n")
    return _size(sizes, size, fn=fn)


def rand(*sizes, size=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    dtypes.check_layout("rand", layout)
    shape = _drawn_size("rand", sizes, size, generator, dtype, layout, device, requires_grad)
    d = _floating(dtype, "check_uniform_bounds")
    return _drawn(_random.uniform(_random._gen(generator), math.prod(shape), d.np).reshape(shape), device,
                  requires_grad)


def randn(*sizes, size=None, generator=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    dtypes.check_layout("randn", layout)
    shape = _drawn_size("randn", sizes, size, generator, dtype, layout, device, requires_grad)
    d = _floating(dtype, "normal_kernel_cpu")
    return _drawn(_random.normal(_random._gen(generator), math.prod(shape), d.np).reshape(shape), device,
                  requires_grad)


def _check_from_to(low, high) -> None:
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")


_RANDINT = tuple(f"{head}tuple of ints size, *, {generator}Tensor out = None, torch.dtype dtype = None, torch.layout "
                 "layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False"
                 for head in ("int high, ", "int low, int high, ") for generator in ("torch.Generator generator, ", ""))


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, layout=None, device=None,
            requires_grad=False) -> Tensor:
    dtypes.check_layout("randint", layout)
    if size is None and isinstance(high, (tuple, list)):
        high, size = None, high                    # randint(high, size)
    if size is None and high is not None:          # randint(high, 2): the size must be a sequence
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {type_name(high)}")
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional arguments: \"size\"")
    if not isinstance(size, (tuple, list)):   # randint(0, n, 32): torch lists its overloads
        given = {"generator": generator, "dtype": dtype, "layout": layout, "device": device}
        error = invalid_arguments("randint", (low, high, size), {k: v for k, v in given.items() if v is not None},
                                  _RANDINT)
        raise TypeError(error.args[0] + "\n")
    shape = _size((tuple(size),), fn="randint")
    low, high = int(low), int(high)
    _check_from_to(low, high)
    d = dtype or dtypes.int64
    arr = _random.integers(_random._gen(generator), math.prod(shape), low, high).reshape(shape)
    return _finish(arr.astype(dtypes.as_np(d)), None, device, requires_grad)


@numpy_names
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    dtypes.check_layout("randn_like", layout)
    return _like(input, dtype, device, requires_grad, memory_format).normal_(generator=generator)


@numpy_names
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    dtypes.check_layout("rand_like", layout)
    return _like(input, dtype, device, requires_grad, memory_format).uniform_(generator=generator)


def _dense(arr) -> bool:
    """Non-overlapping and dense, as torch's test for keeping strides: the dims sorted by stride
    tile the memory exactly (an expanded array, with a stride of 0, is not)."""
    dims = sorted((abs(st), n) for st, n in zip(arr.strides, arr.shape) if n != 1)
    expected = arr.itemsize
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return True


def _like(input, dtype, device, requires_grad, memory_format=None) -> Tensor:
    """empty_like with torch's preserve_format (the default): a dense input's strides are kept, so the
    random fill below walks memory in the same order as torch's; any other input, or contiguous_format,
    gets a contiguous one. (channels_last is checked, not laid out: the fill follows the input.)"""
    dtypes.check_memory_format(memory_format, input.ndim)
    data = backend.to_numpy(input._data)
    keep = _dense(data) and memory_format is not dtypes.contiguous_format
    arr = np.empty_like(data, dtype=dtypes.as_np(dtype or input.dtype), order="K" if keep else "C")
    t = _finish(arr, None, device or input.device, False)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


class _LegacyTensor(type):
    """torch.FloatTensor([...]) / torch.FloatTensor(2, 3) and isinstance checks."""

    def __call__(cls, *args):
        if len(args) == 1 and not isinstance(args[0], int):
            return Tensor(args[0], dtype=cls.dtype)
        return zeros(*args, dtype=cls.dtype)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype


class FloatTensor(metaclass=_LegacyTensor):
    dtype = dtypes.float32


class DoubleTensor(metaclass=_LegacyTensor):
    dtype = dtypes.float64


class LongTensor(metaclass=_LegacyTensor):
    dtype = dtypes.int64


class IntTensor(metaclass=_LegacyTensor):
    dtype = dtypes.int32


class BoolTensor(metaclass=_LegacyTensor):
    dtype = dtypes.bool_


class HalfTensor(metaclass=_LegacyTensor):
    dtype = dtypes.float16


class ShortTensor(metaclass=_LegacyTensor):
    dtype = dtypes.int16


class CharTensor(metaclass=_LegacyTensor):
    dtype = dtypes.int8


class ByteTensor(metaclass=_LegacyTensor):
    dtype = dtypes.uint8


def randperm(n, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    dtypes.check_layout("randperm", layout)
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    arr = _random.permutation(_random._gen(generator), n)
    return _finish(arr.astype(dtypes.as_np(dtype or dtypes.int64)), None, device, requires_grad)


@numpy_names
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None) -> Tensor:
    dtypes.check_layout("randint_like", layout)
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    _check_from_to(low, high)
    return _like(input, dtype, device, requires_grad, memory_format).random_(low, high, generator=generator)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, layout=None, device=None,
           requires_grad=False) -> Tensor:
    """Samples of N(mean, std²), as torch draws them: for tensor arguments, standard normals in the
    broadcast shape, then `* std` and `+ mean` as separate steps in the tensor's dtype."""
    dtypes.check_layout("normal", layout)
    g = _random._gen(generator)
    m = mean._data if isinstance(mean, Tensor) else None
    s = std._data if isinstance(std, Tensor) else None
    if m is None and s is None:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected a size with two numbers")
        check_std(std)
        shape = _size((tuple(size),), fn="normal")
        d = _floating(dtype, "normal_kernel_cpu")
        return _drawn(_random.normal(g, math.prod(shape), d.np, mean, std).reshape(shape), device, requires_grad)
    if s is not None and (backend.to_numpy(s) < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if s is None:
        check_std(std)
    ref = m if m is not None else s
    shape = np.broadcast_shapes(*(x.shape for x in (m, s) if x is not None))
    n = math.prod(shape)
    if s is None:        # normal(Tensor mean, float std): N(0, std) + mean
        z = _random.normal(g, n, ref.dtype, 0.0, std).reshape(shape)
        arr = z + backend.to_numpy(m)
    else:                # float or tensor mean, tensor std: N(0, 1) * std + mean
        z = _random.normal(g, n, ref.dtype).reshape(shape)
        arr = z * backend.to_numpy(s) + (backend.to_numpy(m) if m is not None else ref.dtype.type(mean))
    return _finish(arr.astype(ref.dtype, copy=False), None, device or (mean.device if m is not None else std.device),
                   requires_grad)


def check_std(std) -> None:
    """torch's error for a negative std, the number written as C++ writes a double (-1, -0.5, -1e-20)."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")


@numpy_names
def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """1 with probability input (or p), 0 otherwise, in input's dtype."""
    out = _like(input, None, None, False)
    return out.bernoulli_(input if p is None else p, generator=generator)


@numpy_names
def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Indices drawn from the rows of `input` (unnormalised probabilities), as torch draws them."""
    probs = backend.to_numpy(input._data)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_KERNEL_NAMES[input.dtype.name]}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = probs.shape[-1]
    if not replacement and num_samples > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if k > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = probs.reshape(-1, k)
    if not replacement or num_samples == 1:
        if not (np.all(rows < np.inf) and np.all(rows >= 0)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(rows.sum(-1) == 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    else:
        if np.any(rows < 0):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.all(np.isfinite(rows)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if np.any(rows.sum(-1) <= 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    out = _random.multinomial(_random._gen(generator), np.ascontiguousarray(rows), int(num_samples), replacement)
    return _finish(out.reshape(probs.shape[:-1] + (num_samples,)), None, input.device, False)
