"""torch.nn.utils.init: skip_init, a module built without initializing its parameters."""
from __future__ import annotations

import inspect

from ...random import fork_rng
from ..modules.module import Module


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with its parameters and buffers uninitialized (as torch.empty
    leaves them) and no random numbers drawn: torch builds it on the meta device, where the
    initialization draws none."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    with fork_rng():
        module = module_cls(*args, **kwargs)
    return module.to_empty(device=final_device)
