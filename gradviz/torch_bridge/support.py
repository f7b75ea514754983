"""What every part of the torch bridge shares: importing torch (lazily, with the pinned install
named when it is missing) and the few facts about torch's graph objects read everywhere."""
from __future__ import annotations

from functools import lru_cache

TORCH_REQUIREMENT = "torch==2.13.0"

# torch gives AccumulateGrad the largest sequence number (so its ready queue runs it first);
# it says nothing about when the node was created.
NO_SEQUENCE = 2 ** 64 - 1


def torch_module():
    """torch itself, imported on first use: gradviz works without it."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"gradviz.torch_bridge needs PyTorch, which is not installed: "
                          f"pip install {TORCH_REQUIREMENT}") from exc
    return torch


@lru_cache(maxsize=64)
def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


@lru_cache(maxsize=64)
def device_name(device) -> str:
    return str(device)


def is_accumulate(fn) -> bool:
    return type(fn).__name__ == "AccumulateGrad"


def node_name(fn) -> str:
    # type(fn).__name__, as torchviz: fn.name() says "torch::autograd::AccumulateGrad"
    return type(fn).__name__


def sequence_nr(fn):
    try:
        nr = fn._sequence_nr()
    except (AttributeError, RuntimeError):
        return None
    return None if nr == NO_SEQUENCE else nr


def flatten(tensors) -> tuple:
    """The torch tensors among `tensors` (lists and tuples opened one level); TypeError for the rest."""
    torch = torch_module()
    flat = []
    for t in tensors:
        if isinstance(t, (list, tuple)):
            flat.extend(t)
        else:
            flat.append(t)
    for t in flat:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected torch.Tensor arguments, got {type(t).__name__}")
    return tuple(flat)


def grad_of(tensor):
    """`.grad` where torch keeps one (leaves, retain_grad()); reading it elsewhere only warns."""
    if tensor.is_leaf or tensor.retains_grad:
        return tensor.grad
    return None
