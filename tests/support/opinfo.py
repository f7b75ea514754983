"""PyTorch's OpInfo database read for gradviz: which gradviz function an entry names, and a
sample's torch values turned into gradviz's (tests/ops/test_opinfo.py runs the samples,
tests/ops/test_opinfo_errors.py the error inputs)."""
from __future__ import annotations

import types

import numpy as np
import torch

import gradviz
import gradviz.nn.functional as gF


def resolve(info):
    """The gradviz function an OpInfo entry names, as f(input, *args, **kwargs); None if not exposed."""
    name = info.name
    if name.startswith("nn.functional."):
        fn = getattr(gF, name[len("nn.functional."):], None)
        return fn if callable(fn) else None
    if "." in name:   # linalg., special., fft., ...: gradviz.linalg.norm if it ever exists
        obj = gradviz
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj if callable(obj) else None
    fn = getattr(gradviz, name, None) if not name.startswith("_") else None
    if callable(fn) and not isinstance(fn, type):
        return fn
    method = getattr(gradviz.Tensor, name, None)
    if callable(method):
        return lambda input, *args, **kwargs: getattr(input, name)(*args, **kwargs)
    return None


def _rebind(fn):
    """torch's own lambda (lambda self, cond, other: torch.where(cond, self, other)) with `torch`
    meaning gradviz: the argument order stays torch's, the ops become gradviz's."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "torch": gradviz}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def gradviz_op(info):
    fn = resolve(info)
    if fn is not None and getattr(info.op, "__name__", "") == "<lambda>":
        return _rebind(info.op)
    return fn


def entry_id(info) -> str:
    return info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")


def _within(view, base) -> bool:
    """Does every element of the view lie in its base's memory (read as the base's dtype)?"""
    start = view.storage_offset() - base.storage_offset()
    last = start + sum((n - 1) * st for n, st in zip(view.shape, view.stride()) if n)
    return view.numel() == 0 or 0 <= start and last < base.numel() and min(view.stride(), default=0) >= 0


def _tensor(obj, leaves, device, memo):
    """One torch tensor as a gradviz tensor: a copy; with a memo, a tensor met twice is one gradviz
    tensor and a view of another tensor (an expand, a slice) is a view of the same memory, so that
    checks on overlapping memory see what torch's see."""
    if memo is not None and id(obj) in memo:
        return memo[id(obj)]
    base = obj._base
    if (memo is not None and device is None and base is not None and not obj.requires_grad and base.is_contiguous()
            and base.dtype == obj.dtype and _within(obj, base)):
        owner = _tensor(base, leaves, device, memo).numpy()
        size = obj.element_size()
        flat = owner.reshape(-1)[obj.storage_offset() - base.storage_offset():]
        t = gradviz.from_numpy(np.lib.stride_tricks.as_strided(flat, tuple(obj.shape),
                                                               tuple(s * size for s in obj.stride())))
    else:
        t = gradviz.from_numpy(np.array(obj.detach().numpy()))   # a copy, 0-d arrays included
        if device is not None:
            t = t.to(device)
        if obj.requires_grad:
            t.requires_grad_(True)
            leaves.append((obj, t))
    if memo is not None:
        memo[id(obj)] = t
    return t


def convert(obj, leaves, device=None, memo=None):
    """torch values in a sample -> gradviz values; leaves collects (torch leaf, gradviz leaf) pairs.
    With a device, tensors go there and so does every mention of the sample's own device. A memo
    (id of a torch tensor -> its gradviz tensor), shared by the calls for one sample, keeps the
    sample's tensors sharing memory as torch's do."""
    if device is not None and (isinstance(obj, torch.device) or (isinstance(obj, str) and obj == "cpu")):
        return gradviz.device(device)
    if isinstance(obj, torch.Tensor):
        return _tensor(obj, leaves, device, memo)
    if isinstance(obj, torch.dtype):
        return getattr(gradviz, str(obj)[6:])
    if callable(obj) and obj is getattr(torch, getattr(obj, "__name__", ""), None):
        return getattr(gradviz, obj.__name__)   # a torch function passed as an argument (a distance_function)
    if isinstance(obj, torch.Size):
        return tuple(obj)
    if isinstance(obj, (torch.memory_format, torch.layout)):
        return getattr(gradviz, str(obj)[6:])
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(convert(o, leaves, device, memo) for o in obj)
    if isinstance(obj, dict):
        return {k: (gradviz.device(device) if device is not None and k == "device"
                    else convert(v, leaves, device, memo)) for k, v in obj.items()}
    return obj
