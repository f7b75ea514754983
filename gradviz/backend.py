"""The array namespace: NumPy on the CPU, CuPy on a GPU. The one place that picks.

Everything else asks this module for `namespace_of(array)`, never imports CuPy.
"""
from __future__ import annotations

import threading

import numpy as np

_cupy = None
_cupy_special = None


def cupy():
    """Import CuPy on first use; raise a clear error when it is missing."""
    global _cupy
    if _cupy is None:
        try:
            import cupy as cp  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise RuntimeError(
                "device 'cuda' needs CuPy: pip install 'gradviz[gpu]' (cupy-cuda12x) on a machine with a CUDA GPU"
            ) from exc
        _cupy = cp
    return _cupy


def gpu_special():
    """cupyx.scipy.special: the special functions (erf, digamma, ...) on GPU arrays."""
    global _cupy_special
    if _cupy_special is None:
        cupy()
        import cupyx.scipy.special as special
        _cupy_special = special
    return _cupy_special


def on_cpu(array) -> bool:
    """Is `array` a host array (not CuPy's)?"""
    return type(array) is np.ndarray or _cupy is None or not isinstance(array, _cupy.ndarray)


def writeable(array) -> bool:
    """Can `array` be written in place? (CuPy's arrays have no read-only flag: always.)"""
    return getattr(array.flags, "writeable", True)


def is_array(obj) -> bool:
    """A NumPy or a CuPy array."""
    return isinstance(obj, np.ndarray) or (_cupy is not None and isinstance(obj, _cupy.ndarray))


def cuda_is_available() -> bool:
    try:
        return cupy().cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


class device:
    """A device string, printed like torch's: device(type='cpu')."""

    __slots__ = ("type", "index")

    def __init__(self, spec="cpu", index=None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        kind, _, idx = str(spec).partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {spec}")
        self.type = kind
        self.index = int(idx) if idx else index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index or 0) == (other.type, other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        extra = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{extra})"

    def __enter__(self) -> "device":
        """`with torch.device("cuda"):` makes factories without device= allocate there."""
        _defaults().append(self)
        return self

    def __exit__(self, *exc) -> None:
        _defaults().pop()


# The default device of factory functions: a per-thread stack (torch keeps its device contexts
# per thread), whose bottom entry set_default_device replaces.
_default = threading.local()


def _defaults() -> list:
    if not hasattr(_default, "stack"):
        _default.stack = []
        _default.base = None
    return _default.stack


def default_device():
    """The device factories use when given none, or None for the plain CPU default."""
    stack = _defaults()
    return stack[-1] if stack else _default.base


def set_default_device(dev) -> None:
    _defaults()
    _default.base = None if dev is None else device(dev)


def get_default_device() -> "device":
    dev = default_device()
    if dev is None or dev.type == "cpu":
        return device("cpu") if dev is None else dev
    return dev if dev.index is not None else device(dev.type, 0)


CPU = device("cpu")


def namespace_of(array):
    """NumPy or CuPy, whichever owns `array`."""
    if type(array) is np.ndarray or _cupy is None:
        return np
    return _cupy.get_array_module(array)


def device_of(array) -> device:
    if type(array) is np.ndarray or _cupy is None or namespace_of(array) is np:
        return CPU
    return device("cuda", array.device.id)


def namespace_for(dev) -> object:
    return np if device(dev).type == "cpu" else cupy()


def to_device(array, dev):
    """Move `array` to `dev` (a copy only when the device changes)."""
    dev = device(dev)
    if dev.type == "cpu":
        return to_numpy(array)
    cp = cupy()
    with cp.cuda.Device(dev.index or 0):
        return cp.asarray(array)


def to_numpy(array):
    if type(array) is np.ndarray:
        return array
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return _cupy.asnumpy(array)
    return np.asarray(array)
