"""torch.amp: GradScaler (loss scaling: scale, unscale_, step, update, state_dict) and autocast.

gradviz runs every op in its inputs' dtypes, so autocast can only be off: it turns itself off as
torch's does where torch's would (no CUDA, a dtype CPU autocast does not take) and refuses to turn
on otherwise. GradScaler is torch's in full, and a no-op when disabled, as training scripts run it
on the CPU (GradScaler(enabled=False), or "cuda" without CUDA).
"""
from __future__ import annotations

import enum
import functools
import warnings
from collections import abc, defaultdict
from types import SimpleNamespace

from . import cuda as _cuda
from .autograd.grad_mode import no_grad
from .creation import full
from .dtypes import bfloat16, float16, float32, int32
from .tensor import Tensor

__all__ = ["GradScaler", "autocast", "is_autocast_available", "is_autocast_enabled"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Multiplies the loss by a scale before backward, divides the gradients by it before the step, skips
    a step whose gradients hold an inf or a nan and then shrinks the scale (× backoff_factor), and grows
    it (× growth_factor) after growth_interval steps without one."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            self._enabled = False
        if self._enabled:
            assert growth_factor > 1.0, "The growth factor must be > 1.0."
            assert backoff_factor < 1.0, "The backoff factor must be < 1.0."
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        assert self._scale is not None, f"Attempted {funcname} but _scale is None.  " + fix
        assert self._growth_tracker is not None, f"Attempted {funcname} but _growth_tracker is None.  " + fix
        return self._scale, self._growth_tracker

    def scale(self, outputs):
        """outputs × the scale (a tensor, or the tensors in nested lists and tuples)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._scale = full((), self._init_scale, dtype=float32, device=outputs.device)
                self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        if isinstance(outputs, abc.Iterable):
            scaled = map(self.scale, outputs)
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale in place, noting whether any is inf or nan."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=float32, device=self._scale.device)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if param.grad.dtype is float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not bool(param.grad.isfinite().all()):
                        found_inf.fill_(1.0)
                    param.grad.mul_(inv_scale)
        state["found_inf_per_device"] = {found_inf.device: found_inf}
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(), unless the unscaled gradients hold an inf or a nan (then None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        assert len(state["found_inf_per_device"]) > 0, "No inf checks were recorded for this optimizer."
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Shrink the scale after a skipped step, grow it after growth_interval good ones (or set new_scale)."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor "
                          "with requires_grad=False.")
                assert new_scale.numel() == 1, reason
                assert new_scale.requires_grad is False, reason
                scale.copy_(new_scale)
        else:
            found_infs = [f for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            assert len(found_infs) > 0, "No inf checks were recorded prior to update."
            if sum(f.item() for f in found_infs):
                scale.mul_(self._backoff_factor)
                growth_tracker.fill_(0)
            elif growth_tracker.item() + 1 == self._growth_interval:
                scale.mul_(self._growth_factor)
                growth_tracker.fill_(0)
            else:
                growth_tracker.add_(1)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])


class autocast:
    """`with torch.autocast(device_type, dtype=None, enabled=True)`, or as a decorator. It turns itself
    off, with torch's warning, where torch's would; an autocast left on is refused on entry."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else (bfloat16 if device_type == "cpu" else float16)
        if enabled and device_type == "cuda" and not _cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.")
            enabled = False
        if enabled and device_type == "cpu" and self.fast_dtype not in (bfloat16, float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU Autocast "
                          "only supports dtypes of torch.bfloat16, torch.float16 currently.")
            enabled = False
        self._enabled = enabled

    def __enter__(self) -> "autocast":
        if self._enabled:
            raise RuntimeError(f"gradviz does not autocast: its ops run in their inputs' dtypes, so autocast("
                               f"'{self.device}', dtype={self.fast_dtype}) cannot be on. Cast the model and its "
                               "inputs instead (model.half(), x.half()), or pass enabled=False.")
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def is_autocast_available(device_type: str) -> bool:
    return device_type in ("cpu", "cuda")


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Always False: an autocast that would be on is refused."""
    return False


class _CudaGradScaler(GradScaler):
    """torch.cuda.amp.GradScaler(...): torch.amp.GradScaler('cuda', ...), deprecated."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class _CudaAutocast(autocast):
    """torch.cuda.amp.autocast(...): torch.amp.autocast('cuda', ...), deprecated."""

    def __init__(self, enabled: bool = True, dtype=float16, cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


_CudaGradScaler.__name__ = _CudaGradScaler.__qualname__ = "GradScaler"
_CudaAutocast.__name__ = _CudaAutocast.__qualname__ = "autocast"
# torch.cuda.amp, its deprecated CUDA forms (gradviz/__init__ hangs it on gradviz.cuda)
cuda_amp = SimpleNamespace(GradScaler=_CudaGradScaler, autocast=_CudaAutocast)
