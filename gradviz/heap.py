"""How the C heap holds NumPy's arrays on Linux: kept mapped between training steps.

NumPy takes each array's memory from the C library's malloc. glibc serves a block over its mmap
threshold by mapping fresh pages, and gives the top of its heap back to the system once more than its
trim threshold lies free there (both 128 KiB at start; they grow when a large mapped block is freed,
the trim threshold to twice the other, up to 32 MiB and 64 MiB). A training step allocates its
activations on the way forward and frees them at its end: megabytes lie free at the top, glibc hands
them back, and the next step touches every page again, a page fault and a page of zeros each. On the
GPT of examples/gpt.py that was about 1,000 faults per step (4 MB, 15% of its time); on LeNet-5
0-300 depending on the process, which made its step time bimodal.

`keep_heap()` sets the two thresholds where glibc's own growth ends, from the start: a freed block up
to 32 MiB stays in the heap for the next step, and up to 64 MiB of freed heap stays mapped. On other
C libraries it does nothing.
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
