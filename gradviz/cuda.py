"""torch.cuda: is a GPU there, seeding, synchronizing, and the memory queries.

gradviz runs CUDA tensors on CuPy. Without a GPU every answer is the one a CPU build of
torch gives, since that is what a learner's program prints on a laptop: the memory counters
are 0, `memory_stats()` is an empty OrderedDict, `empty_cache()` does nothing, and the calls
that need CUDA's allocator fail with the CPU build's errors. With a GPU the current counters
read CuPy's default memory pool (its used and held bytes); CuPy keeps no peak, so the peak
queries say so rather than answer with a number that was never measured.
"""
from __future__ import annotations

import collections
import warnings

from . import accelerator, backend

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def is_available() -> bool:
    return backend.cuda_is_available()


def device_count() -> int:
    return accelerator.device_count()


def is_initialized() -> bool:
    return is_available()


def manual_seed(seed) -> None:
    """Seeds torch's CUDA generators, which never touch the CPU stream. gradviz draws CUDA
    tensors from the CPU generator, so there is nothing to seed here."""


manual_seed_all = manual_seed


def synchronize(device=None) -> None:
    """Wait for every kernel queued on the GPU (torch.cuda.synchronize)."""
    accelerator.synchronize(device)


def _require() -> None:
    if not is_available():
        raise AssertionError(_NOT_COMPILED)


def current_device() -> int:
    _require()
    return accelerator.current_device_index()


def get_device_name(device=None) -> str:
    _require()
    index = current_device() if device is None else (backend.device(device).index or 0)
    name = backend.cupy().cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else name


def _pool():
    return backend.cupy().get_default_memory_pool() if is_available() else None


def memory_allocated(device=None) -> int:
    """Bytes held by tensors now (0 without a GPU, as a CPU build answers)."""
    pool = _pool()
    return 0 if pool is None else int(pool.used_bytes())


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds from the driver, used or cached (0 without a GPU)."""
    pool = _pool()
    return 0 if pool is None else int(pool.total_bytes())


def _no_peak(name: str) -> None:
    raise RuntimeError(f"torch.cuda.{name}: gradviz's CUDA tensors live in CuPy's memory pool, which keeps "
                       "no peak; read memory_allocated() or memory_reserved() for the current bytes")


def max_memory_allocated(device=None) -> int:
    if is_available():
        _no_peak("max_memory_allocated")
    return 0


def max_memory_reserved(device=None) -> int:
    if is_available():
        _no_peak("max_memory_reserved")
    return 0


def memory_cached(device=None) -> int:
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def memory_stats(device=None) -> collections.OrderedDict:
    """The allocator's counters by name; a CPU build has none."""
    stats = collections.OrderedDict()
    if is_available():
        stats["allocated_bytes.all.current"] = memory_allocated(device)
        stats["reserved_bytes.all.current"] = memory_reserved(device)
    return stats


def _missing_allocator(binding: str) -> None:
    # what a CPU build raises: the Python wrapper reaches for a CUDA binding it was built without
    raise AttributeError(f"module 'torch._C' has no attribute '{binding}'")


def reset_peak_memory_stats(device=None) -> None:
    if is_available():
        _no_peak("reset_peak_memory_stats")
    _missing_allocator("_cuda_resetPeakMemoryStats")


def reset_accumulated_memory_stats(device=None) -> None:
    if is_available():
        _no_peak("reset_accumulated_memory_stats")
    _missing_allocator("_cuda_resetAccumulatedMemoryStats")


def reset_max_memory_allocated(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def empty_cache() -> None:
    """Give the allocator's unused cached blocks back to the driver (nothing to do without a GPU)."""
    pool = _pool()
    if pool is not None:
        pool.free_all_blocks()


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of the GPU, as the driver reports them."""
    _require()
    free, total = backend.cupy().cuda.runtime.memGetInfo()
    return int(free), int(total)
