"""torch.nn.parallel.data_parallel: DataParallel, the wrapper a tutorial puts around its model.

Without an accelerator torch's wraps the module and calls it (no device ids); so does
gradviz's. With one, torch scatters each batch over its devices, runs a replica on each and
gathers the outputs on output_device; gradviz runs the whole batch on device_ids[0], which gives
the same outputs and gradients with no parallel speed-up.
"""
from __future__ import annotations

import itertools

from ... import accelerator, backend
from ...tensor import Tensor
from ..modules.module import Module


def _to(obj, device):
    """Tensors inside tuples, lists and dicts moved to device (torch's scatter, for one device)."""
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, device) for k, v in obj.items()}
    return obj


class DataParallel(Module):
    """module run on the accelerator's devices; `.module` is the wrapped module, so its state_dict
    keys gain the prefix "module."."""

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        if not accelerator.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(accelerator.device_count()))
        self.dim = dim
        self.module = module
        self.device_ids = [backend.device(d).index if not isinstance(d, int) else d for d in device_ids]
        self.output_device = device_ids[0] if output_device is None else output_device
        self.src_device_obj = backend.device(f"cuda:{self.device_ids[0]}")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in itertools.chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                                   f"(device_ids[0]) but found one of them on device: {t.device}")
        return self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))
