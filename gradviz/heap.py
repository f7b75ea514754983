"""How the C heap holds NumPy's arrays on Linux: kept mapped between training steps.

NumPy takes each array's memory from the C library's malloc. glibc serves a block over its mmap
threshold (128 KiB at start) by mapping fresh pages, and gives the top of its heap back to the system
once more than twice that threshold lies free there. Both thresholds grow by themselves when a large
mapped block is freed, up to 32 MiB and 64 MiB. A training step allocates its activations on the way
forward and frees them at its end, so until the thresholds have grown each step maps (or grows the
heap by) the same megabytes again and touches every page once more: a page fault and a page of zeros
each. On the GPT of examples/gpt.py that was about 1,000 faults per step (4 MB, 15% of its time); on
LeNet-5 0–300 depending on the process, which made its step time bimodal.

`keep_heap()` sets the two thresholds to the values glibc's own growth ends at, from the start: a
freed block up to 32 MiB stays in the heap for the next step, and up to 64 MiB of freed heap stays
mapped. On other C libraries it does nothing.
"""
from __future__ import annotations

import ctypes
import os

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3   # malloc.h
_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024   # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit machines


def keep_heap() -> bool:
    """Set glibc's mmap and trim thresholds where its own adjustment ends; False where not glibc."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
    except (AttributeError, ValueError, OSError):   # no confstr, or not glibc
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    # the trim threshold first: glibc's own rule keeps it at twice the mmap threshold
    return bool(mallopt(_M_TRIM_THRESHOLD, 2 * _MMAP_THRESHOLD_MAX)) and bool(
        mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX))
