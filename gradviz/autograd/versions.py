"""Version counters: how a tensor's in-place writes are counted (PyTorch's _version), the clock of
every write that lets a node with nothing written since skip its checks, what a view knows of its
base, and PyTorch's error for a saved tensor modified in place."""
from __future__ import annotations

import re

from ..dtypes import SCALAR_TYPE
from .anomaly import _anomaly


class _Clock:
    """Counts in-place writes anywhere; Node.epoch is its reading when the node was created,
    so a node with nothing written since skips its version checks."""

    __slots__ = ("now",)

    def __init__(self):
        self.now = 0

    def tick(self) -> int:
        self.now += 1
        return self.now


_clock = _Clock()


class VersionCounter:
    """A tensor's count of in-place writes (PyTorch's _version), created at its first write
    or when a view or detach() starts sharing it. One int: bounded however long it lives."""

    __slots__ = ("version",)

    def __init__(self):
        self.version = 0

    def bump(self) -> None:
        self.version += 1
        _clock.tick()


# How a view was made (PyTorch's CreationMeta): writing into a view made by a function that
# returns several views, made in no_grad mode, or returned by a custom Function (whose backward
# the write's history would bypass), cannot be recorded, so it is refused.
DEFAULT, MULTI_OUTPUT, NO_GRAD, IN_CUSTOM_FUNCTION = 0, 1, 2, 3


class ViewMeta:
    """What a view knows of its base: the base (the root, never a view itself), how it was
    made, and the version at which its grad_fn was last set (a write to the base or to any
    view of it since means the grad_fn is regenerated, as PyTorch's AsStridedBackward0)."""

    __slots__ = ("base", "version", "creation")

    def __init__(self, base, version: int, creation: int):
        self.base = base
        self.version = version
        self.creation = creation


def modified_message(array, grad_fn, output_nr: int, version: int, expected: int) -> str:
    """PyTorch's words for a saved tensor modified in place ("output 0 of Mul" names its grad_fn)."""
    where = ""
    if grad_fn is not None:
        name = grad_fn if isinstance(grad_fn, str) else grad_fn.name()
        where = f", which is output {output_nr} of {re.sub(r'Backward[0-9]*$', '', name)},"
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[torch.{SCALAR_TYPE[array.dtype.name]}Tensor [{', '.join(map(str, array.shape))}]]{where} is at "
            f"version {version}; expected version {expected} instead. Hint: " + (
                "the backtrace further above shows the operation that failed to compute its gradient. The variable "
                "in question was changed in there or anywhere later. Good luck!" if _anomaly.enabled else
                "enable anomaly detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False)."))
