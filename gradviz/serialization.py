"""torch.save / torch.load for gradviz: tensors, state_dicts, optimizer states and plain containers.

The file is gradviz's own format: a magic line, then a pickle in which every tensor is
reduced to (raw bytes, dtype, shape, requires_grad, is a Parameter), so no array library
appears in it. weights_only=True (torch's default) unpickles with an allow-list: tensors,
Python containers and scalars, OrderedDict and torch.Size, and the classes and functions a
program allows (add_safe_globals, the safe_globals context); anything else is refused in torch's words.
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
    ("gradviz.dtypes", "from_name"),   # a dtype, as torch's weights-only load takes torch.float32
    ("collections", "OrderedDict"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"),
    ("builtins", "complex"), ("builtins", "bytearray"),
}


_allowed: dict = {}   # "module.qualname" -> the class or function a program allowed (add_safe_globals)


def _global_name(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes and functions (or (object, "module.name") pairs) in weights-only loads."""
    for entry in safe_globals:
        obj, name = entry if isinstance(entry, tuple) else (entry, _global_name(entry))
        _allowed[name] = entry


def get_safe_globals() -> list:
    """What add_safe_globals allowed, as it was given."""
    return list(_allowed.values())


def clear_safe_globals() -> None:
    _allowed.clear()


class safe_globals:
    """A context (a class, as torch's): within it these classes and functions are allowed as
    add_safe_globals allows them; the list is as it was after it."""

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = safe_globals
        self._before: dict = {}

    def __enter__(self) -> None:
        self._before = dict(_allowed)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc) -> None:
        _allowed.clear()
        _allowed.update(self._before)


def _unsupported(module: str, name: str) -> pickle.UnpicklingError:
    """torch's refusal of a global the weights-only unpickler does not allow, naming gradviz's API."""
    full = f"{module}.{name}"
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, \x1b[1mdo those "
        "steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we changed the default "
        "value of the `weights_only` argument in `torch.load` from `False` to `True`; gradviz.load follows it. "
        "Re-running `gradviz.load` with `weights_only` set to `False` will likely succeed, but it can result in "
        "arbitrary code execution. Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to "
        "load with `weights_only=True` please check the recommended steps in the following error message.\n\t"
        f"WeightsUnpickler error: Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`gradviz.serialization.add_safe_globals([{full}])` or the `gradviz.serialization.safe_globals([{full}])` "
        "context manager to allowlist this global if you trust this class/function.\n\nCheck the documentation of "
        "torch.load to learn more about types accepted by default with weights_only "
        "https://pytorch.org/docs/stable/generated/torch.load.html.")


class _WeightsOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _SAFE:
            return super().find_class(module, name)
        entry = _allowed.get(f"{module}.{name}")
        if entry is not None:
            return entry[0] if isinstance(entry, tuple) else entry
        raise _unsupported(module, name)


class _GlobalsLister(pickle.Unpickler):
    """Reads a pickle only to list the globals it names that a weights-only load would refuse."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self.unsafe: list = []

    def find_class(self, module: str, name: str):
        if (module, name) in _SAFE:
            return super().find_class(module, name)
        full = f"{module}.{name}"
        if full not in _allowed and full not in self.unsafe:
            self.unsafe.append(full)
        return _Stand_in


class _Stand_in:
    """What an unread global becomes while listing: it takes any construction and any state."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __setstate__(self, state) -> None:
        pass


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The "module.name" of every global in the file that a weights-only load would refuse."""
    lister = _GlobalsLister(io.BytesIO(_payload(f)))
    lister.load()
    return lister.unsafe


def save(obj: Any, f, pickle_module=None, pickle_protocol: int = PROTOCOL, _use_new_zipfile_serialization=True) -> None:
    """Write obj to a path or a binary file object."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle_protocol).dump(obj)
    payload = MAGIC + buffer.getvalue()
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.fspath(f))
        if parent and not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        with open(f, "wb") as out:
            out.write(payload)
    else:
        f.write(payload)


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None, mmap=None,
         **pickle_load_args) -> Any:
    """Read what save wrote; map_location ('cpu', 'cuda', a device) moves every tensor there."""
    stream = io.BytesIO(_payload(f))
    unpickler = (pickle.Unpickler if weights_only is False else _WeightsOnlyUnpickler)(stream)
    obj = unpickler.load()
    if map_location is not None:
        if callable(map_location) or isinstance(map_location, dict):
            raise TypeError("map_location: gradviz.load takes a device or a device string")
        obj = _move(obj, map_location)
    return obj


def _payload(f) -> bytes:
    """The pickle in a file gradviz.save wrote (a path or a binary file object)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as src:
            payload = src.read()
    else:
        payload = f.read()
    if not payload.startswith(MAGIC):
        raise RuntimeError("not a file written by gradviz.save (a PyTorch checkpoint is a zip archive: load it with "
                           "torch.load, then pass its tensors to gradviz.tensor)")
    return payload[len(MAGIC):]


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
