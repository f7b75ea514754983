"""Tensor creation (tensor, zeros, arange, randn, ...) and the random generator."""
from __future__ import annotations

import numpy as np

from . import backend, dtypes
from .tensor import Tensor

_generator = [np.random.default_rng()]


def _rng() -> np.random.Generator:
    return _generator[0]


def manual_seed(seed: int):
    _generator[0] = np.random.default_rng(seed)
    return _generator[0]


def seed() -> int:
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


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


def rand(*sizes, size=None, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    return _finish(_rng().random(_size(sizes, size)), dtype or dtypes.get_default_dtype(), device, requires_grad)


def randn(*sizes, size=None, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    return _finish(_rng().standard_normal(_size(sizes, size)), dtype or dtypes.get_default_dtype(), device,
                   requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    if size is None and isinstance(high, (tuple, list)):
        high, size = None, high                    # randint(high, size)
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional arguments: \"size\"")
    return _finish(_rng().integers(low, high, size=_size((tuple(size),))), dtype or dtypes.int64, device,
                   requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    return randn(tuple(input.shape), dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    return rand(tuple(input.shape), dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


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


def randperm(n, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    return _finish(_rng().permutation(int(n)), dtype or dtypes.int64, device, requires_grad)


def randint_like(input, low=0, high=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    if high is None:
        low, high = 0, low
    return _finish(_rng().integers(low, high, size=tuple(input.shape)), dtype or input.dtype, device or input.device,
                   requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Samples of N(mean, std²): mean and std may be tensors (broadcast) or numbers (then size is needed)."""
    m = mean._data if isinstance(mean, Tensor) else None
    s = std._data if isinstance(std, Tensor) else None
    if m is None and s is None:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected a size with two numbers")
        out_dtype = dtype or dtypes.get_default_dtype()
        arr = _rng().normal(mean, std, _size((tuple(size),)))
    else:
        ref = m if m is not None else s
        out_dtype = ref.dtype
        shape = np.broadcast_shapes(*(x.shape for x in (m, s) if x is not None))
        arr = _rng().normal(np.asarray(mean if m is None else m), np.asarray(std if s is None else s), shape)
    return _finish(arr, out_dtype, device, requires_grad)


def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """1 with probability input (or p), 0 otherwise, in input's dtype."""
    probs = input._data if p is None else np.full(input.shape, p)
    arr = (_rng().random(tuple(input.shape)) < probs).astype(input._data.dtype)
    return Tensor._make(arr)
