"""torch.nn.utils.convert_parameters: every parameter flattened into one vector, and back."""
from __future__ import annotations

from ...functions.shape import cat
from ...tensor import Tensor


def _check_param_device(param, old_param_device):
    """-1 for the CPU, else the GPU's index; torch's error for parameters on two devices."""
    device = param.get_device() if param.is_cuda else -1
    if old_param_device is not None and device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters):
    device, flat = None, []
    for param in parameters:
        device = _check_param_device(param, device)
        flat.append(param.view(-1))
    return cat(flat)


def vector_to_parameters(vec, parameters) -> None:
    """Each parameter's .data replaced by its slice of vec, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device, pointer = None, 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
