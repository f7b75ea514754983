"""torch.nn.parameter: Parameter, the tensor a Module registers as its learnable state."""
from __future__ import annotations

from ..tensor import Tensor
from .. import creation


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter (requires_grad=True by default)."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        data = data if data is not None else creation.tensor([])
        t = Tensor._make(data._data)
        t.__class__ = cls
        if data._vc:   # the same storage, so the same version counter (torch's _make_subclass)
            t._vc = data._vc
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
