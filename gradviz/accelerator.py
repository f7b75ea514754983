"""torch.accelerator: the current accelerator, which for gradviz is CUDA when CuPy sees a GPU.

On a machine without one, as in torch, `is_available()` is False, `current_accelerator()` is
None and asking for a device index is an error, so the usual idiom
`torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"` picks
the CPU.
"""
from __future__ import annotations

from . import backend

_current = [0]


def is_available() -> bool:
    return backend.cuda_is_available()


def device_count() -> int:
    return backend.cupy().cuda.runtime.getDeviceCount() if is_available() else 0


def current_accelerator(check_available: bool = False):
    """device(type='cuda') when CuPy sees a GPU, else None."""
    return backend.device("cuda") if is_available() else None


def _require() -> None:
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    _require()
    return _current[0]


def set_device_index(device) -> None:
    _require()
    index = device.index if isinstance(device, backend.device) else int(device)
    backend.cupy().cuda.Device(index).use()
    _current[0] = index


current_device_idx, set_device_idx = current_device_index, set_device_index


def synchronize(device=None) -> None:
    _require()
    backend.cupy().cuda.Device(_current[0] if device is None else backend.device(device).index or 0).synchronize()
