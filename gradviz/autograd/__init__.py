"""gradviz.autograd: the engine's public face, named as torch.autograd."""
from . import forward_ad, function, functional  # noqa: F401
from .engine import Backward, Step, backward, backward_steps, grad  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .functional import gradcheck, gradgradcheck  # noqa: F401
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .grad_mode import is_inference_mode_enabled  # noqa: F401
from .anomaly import detect_anomaly, set_detect_anomaly  # noqa: F401
from .nodes import AccumulateGrad, Node  # noqa: F401
from ..tensor import Tensor as _Tensor


def Variable(data, requires_grad=False, volatile=False):
    """The deprecated torch.autograd.Variable: today just a Tensor."""
    if isinstance(data, _Tensor):
        return _Tensor._make(data._data).requires_grad_(requires_grad)   # a new leaf on the same storage
    return _Tensor._from_data(data, requires_grad=requires_grad)
