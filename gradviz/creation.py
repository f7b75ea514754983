"""Tensor creation (tensor, zeros, arange, randn, ...); random tensors draw from gradviz.random."""
from __future__ import annotations

import math

import numpy as np

from . import backend, dtypes
from . import random as _random
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401
from .tensor import Tensor


def _size(size, keyword=None) -> tuple:
    if keyword is not None:
        if size:
            raise TypeError("size given both as positional arguments and as size=")
        size = (keyword,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return size


def _finish(arr, dtype, device, requires_grad):
    if dtype is not None:
        arr = arr.astype(dtypes.as_np(dtype), copy=False)
    if device is not None and backend.device(device).type != "cpu":
        arr = backend.to_device(arr, device)
    t = Tensor._make(arr)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def tensor(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                      "sourceTensor.clone().detach().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        data = data._data.copy()
    elif isinstance(data, np.ndarray):
        data = data.copy()
    return Tensor._from_data(data, dtype=dtype, device=device, requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return Tensor._from_data(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """Shares memory with `array`, as torch.from_numpy does."""
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _filled(value, size: tuple, dtype, device, requires_grad):
    np_dtype = dtypes.as_np(dtype) if dtype is not None else dtypes.get_default_dtype().np
    return _finish(np.full(size, value, dtype=np_dtype), None, device, requires_grad)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(0, _size(sizes, size), dtype, device, requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(1, _size(sizes, size), dtype, device, requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(0, _size(sizes, size), dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = dtypes.from_numpy_dtype(dtypes.result_type((), (fill_value,)))
    return _filled(fill_value, _size((tuple(size),)), dtype, device, requires_grad)


def zeros_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    return zeros(tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    return ones(tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    return zeros_like(input, dtype, device, requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = dtypes.from_numpy_dtype(dtypes.result_type((), (start, end, step)))
    return _finish(np.arange(start, end, step, dtype=np.float64).astype(dtypes.as_np(dtype)), None, device,
                   requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.linspace(start, end, steps), dtype or dtypes.get_default_dtype(), device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
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


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    shape = _size(sizes, size)
    d = _floating(dtype, "check_uniform_bounds")
    return _drawn(_random.uniform(_random._gen(generator), math.prod(shape), d.np).reshape(shape), device,
                  requires_grad)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    shape = _size(sizes, size)
    d = _floating(dtype, "normal_kernel_cpu")
    return _drawn(_random.normal(_random._gen(generator), math.prod(shape), d.np).reshape(shape), device,
                  requires_grad)


def _check_from_to(low, high) -> None:
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    if size is None and isinstance(high, (tuple, list)):
        high, size = None, high                    # randint(high, size)
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional arguments: \"size\"")
    shape = _size((tuple(size),))
    low, high = int(low), int(high)
    _check_from_to(low, high)
    d = dtype or dtypes.int64
    arr = _random.integers(_random._gen(generator), math.prod(shape), low, high).reshape(shape)
    return _finish(arr.astype(dtypes.as_np(d)), None, device, requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(input, dtype, device, requires_grad).normal_(generator=generator)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(input, dtype, device, requires_grad).uniform_(generator=generator)


def _like(input, dtype, device, requires_grad) -> Tensor:
    """empty_like with torch's preserve_format: a dense input's strides are kept, so the random
    fill below walks memory in the same order as torch's."""
    arr = np.empty_like(backend.to_numpy(input._data), dtype=dtypes.as_np(dtype or input.dtype), order="K")
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


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    arr = _random.permutation(_random._gen(generator), n)
    return _finish(arr.astype(dtypes.as_np(dtype or dtypes.int64)), None, device, requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False) -> Tensor:
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    _check_from_to(low, high)
    return _like(input, dtype, device, requires_grad).random_(low, high, generator=generator)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Samples of N(mean, std²), as torch draws them: for tensor arguments, standard normals in the
    broadcast shape, then `* std` and `+ mean` as separate steps in the tensor's dtype."""
    g = _random._gen(generator)
    m = mean._data if isinstance(mean, Tensor) else None
    s = std._data if isinstance(std, Tensor) else None
    if m is None and s is None:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected a size with two numbers")
        _check_std(std)
        shape = _size((tuple(size),))
        d = _floating(dtype, "normal_kernel_cpu")
        return _drawn(_random.normal(g, math.prod(shape), d.np, mean, std).reshape(shape), device, requires_grad)
    if s is not None and (backend.to_numpy(s) < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if s is None:
        _check_std(std)
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


def _check_std(std) -> None:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """1 with probability input (or p), 0 otherwise, in input's dtype."""
    out = _like(input, None, None, False)
    return out.bernoulli_(input if p is None else p, generator=generator)


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
