"""Process-wide switches torch has that gradviz keeps for tutorials' sake: the CPU thread count,
deterministic mode and the float32 matmul precision. What each does in gradviz is in its docstring."""
from __future__ import annotations

import os
import warnings

import numpy as np

from ._args import type_name

_state = {"threads": None, "deterministic": False, "warn_only": False, "matmul_precision": "highest"}


def get_num_threads() -> int:
    """The number set by set_num_threads, else the CPUs this process may run on (torch's default is
    about that). gradviz does not use it: see set_num_threads."""
    threads = _state["threads"]
    if threads is None:
        try:
            threads = len(os.sched_getaffinity(0))
        except AttributeError:   # not Linux
            threads = os.cpu_count() or 1
    return threads


def set_num_threads(num: int) -> None:
    """torch.set_num_threads: how many threads torch's CPU kernels may use. gradviz's ops are NumPy
    calls, whose BLAS library chooses its own thread count (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS or
    threadpoolctl set it), so gradviz only checks `num` as torch does and remembers it for
    get_num_threads; no computation changes."""
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)):
        raise RuntimeError(f"set_num_threads expects an int, but got {type_name(num)}")
    num = int(num)
    if not -2 ** 31 <= num < 2 ** 31:
        raise ValueError("Overflow when unpacking long")
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = num


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """torch.use_deterministic_algorithms: make torch refuse (or warn about, with warn_only) the
    ops that have no deterministic implementation, which are CUDA kernels. gradviz remembers the
    setting for are_deterministic_algorithms_enabled and checks nothing: its NumPy ops give the same
    result every run, and it raises no error or warning where torch would on a GPU."""
    for name, value, position in (("mode", mode, " (position 1)"), ("warn_only", warn_only, "")):
        if type(value) is not bool:
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{position} must be bool, not "
                            f"{type(value).__name__}")
    _state["deterministic"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """What use_deterministic_algorithms was last given (False at first)."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The warn_only that use_deterministic_algorithms was last given (False at first)."""
    return _state["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """torch.set_float32_matmul_precision: let float32 matmuls use TF32 or bfloat16 internally ("high",
    "medium") on hardware that has them. gradviz's float32 matmuls are NumPy's, always full float32
    ("highest"), so it checks and remembers `precision` as torch does and computes nothing differently;
    an unknown name is warned about and ignored, in torch's words."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type_name(precision)}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """What set_float32_matmul_precision was last given ("highest" at first)."""
    return _state["matmul_precision"]
