"""torch.save / torch.load for gradviz: tensors, state_dicts, optimizer states and plain containers.

The file is gradviz's own format: a magic line, then a pickle in which every tensor is
reduced to (raw bytes, dtype, shape, requires_grad, is a Parameter), so no array library
appears in it. weights_only=True (torch's default) unpickles with an allow-list: tensors,
Python containers and scalars, OrderedDict and torch.Size; anything else is refused.
"""
from __future__ import annotations

import collections
import io
import os
import pickle
from typing import Any

import numpy as np

from . import backend
from .dtypes import Size
from .tensor import Tensor
from .nn.parameter import is_lazy
from .nn.modules import Parameter

MAGIC = b"GRADVIZ-SAVE-1\n"
PROTOCOL = 4


def _rebuild_tensor(raw: bytes, dtype: str, shape: tuple, requires_grad: bool, parameter: bool,
                    attributes: dict | None = None):
    data = np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape).copy()
    if parameter:
        t = Parameter(Tensor._make(data), requires_grad)
    else:
        t = Tensor._make(data)
        if requires_grad:
            t.requires_grad_(True)
    if attributes:   # a tensor's own Python attributes (t.g = ...) are saved with it, as torch saves them
        t.__dict__.update(attributes)
    return t


def _rebuild_size(dims: tuple) -> Size:
    return Size(dims)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if is_lazy(obj):   # an uninitialized parameter has no data: it pickles as itself (its __reduce_ex__)
                return NotImplemented
            data = backend.to_numpy(obj._data)
            if not data.flags.c_contiguous:   # (np.ascontiguousarray would make a 0-d array 1-d)
                data = data.copy()
            return _rebuild_tensor, (data.tobytes(), data.dtype.str, tuple(data.shape), obj.requires_grad,
                                     isinstance(obj, Parameter), obj.__dict__ or None)
        if type(obj) is Size:
            return _rebuild_size, (tuple(obj),)
        return NotImplemented


_SAFE = {
    ("gradviz.serialization", "_rebuild_tensor"), ("gradviz.serialization", "_rebuild_size"),
    ("collections", "OrderedDict"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"),
    ("builtins", "complex"), ("builtins", "bytearray"),
}


class _WeightsOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _SAFE:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Weights only load failed. In gradviz, as in PyTorch 2.6 and later, `weights_only` defaults to True: "
            f"only tensors, containers and scalars are loaded. Unsupported global: GLOBAL {module}.{name}. "
            "Re-running `gradviz.load` with `weights_only` set to `False` will likely succeed, but it can result in "
            "arbitrary code execution. Do it only if you got the file from a trusted source.")


def save(obj: Any, f, pickle_module=None, pickle_protocol: int = PROTOCOL, _use_new_zipfile_serialization=True) -> None:
    """Write obj to a path or a binary file object."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle_protocol).dump(obj)
    payload = MAGIC + buffer.getvalue()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            out.write(payload)
    else:
        f.write(payload)


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None, mmap=None,
         **pickle_load_args) -> Any:
    """Read what save wrote; map_location ('cpu', 'cuda', a device) moves every tensor there."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as src:
            payload = src.read()
    else:
        payload = f.read()
    if not payload.startswith(MAGIC):
        raise RuntimeError("not a file written by gradviz.save (a PyTorch checkpoint is a zip archive: load it with "
                           "torch.load, then pass its tensors to gradviz.tensor)")
    stream = io.BytesIO(payload[len(MAGIC):])
    unpickler = (pickle.Unpickler if weights_only is False else _WeightsOnlyUnpickler)(stream)
    obj = unpickler.load()
    if map_location is not None:
        if callable(map_location) or isinstance(map_location, dict):
            raise TypeError("map_location: gradviz.load takes a device or a device string")
        obj = _move(obj, map_location)
    return obj


def _move(obj, device, memo=None):
    """obj with every tensor moved to device (shared tensors stay shared)."""
    memo = {} if memo is None else memo
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, Tensor):
        moved = obj if str(obj.device) == str(device) else obj.to(device)
        if moved is not obj and obj.requires_grad and moved.grad_fn is not None:
            moved = moved.detach().requires_grad_(True)
        memo[id(obj)] = moved
        return moved
    if isinstance(obj, dict):
        out = type(obj)() if isinstance(obj, collections.OrderedDict) else {}
        for k, v in obj.items():
            out[k] = _move(v, device, memo)
        return out
    if isinstance(obj, list):
        return [_move(v, device, memo) for v in obj]
    if isinstance(obj, tuple) and type(obj) is tuple:
        return tuple(_move(v, device, memo) for v in obj)
    return obj
