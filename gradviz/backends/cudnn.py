"""torch.backends.cudnn: the cuDNN switches. gradviz calls no cuDNN (its convolutions are its own
NumPy / CuPy code), so `is_available()` is False and `version()` None; `enabled`, `benchmark`,
`deterministic` and `allow_tf32` can be set and read back, as tutorials do
(`torch.backends.cudnn.benchmark = True`), with torch's defaults and type checks, and change
nothing: gradviz's convolutions are the same, deterministic computation whatever they say."""
import sys
import types

from .flags import Flag


def is_available() -> bool:
    """Is cuDNN there for gradviz to call? No: gradviz does not use cuDNN."""
    return False


def version():
    """cuDNN's version; None, as in a PyTorch without cuDNN."""
    return None


class _CudnnModule(types.ModuleType):
    enabled = Flag(True, "set_enabled_cudnn")
    benchmark = Flag(False, "set_benchmark_cudnn")
    deterministic = Flag(False, "set_deterministic_cudnn")
    allow_tf32 = Flag(True, "set_allow_tf32_cublas")   # sic: torch's message names cuBLAS here


sys.modules[__name__].__class__ = _CudnnModule
