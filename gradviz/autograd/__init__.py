"""gradviz.autograd: the engine's public face, named as torch.autograd."""
from . import forward_ad, function, functional, graph  # noqa: F401  (torch.autograd.graph, ...)
from .engine import Backward, Step, backward, backward_steps, grad  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .functional import gradcheck, gradgradcheck  # noqa: F401
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .grad_mode import is_inference_mode_enabled  # noqa: F401
from .anomaly import detect_anomaly, set_detect_anomaly  # noqa: F401
from .nodes import AccumulateGrad, Node  # noqa: F401
from .._args import type_name as _type_name
from ..tensor import Tensor as _Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, _Tensor)


class Variable(metaclass=_VariableMeta):
    """The deprecated torch.autograd.Variable, a class as torch's: Variable(t) is a new leaf over t's
    storage, and every tensor is an instance (isinstance(x, Variable) holds)."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, _Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {_type_name(data)}")
        return _Tensor._make(data._data).requires_grad_(requires_grad)
