"""Warnings as PyTorch raises them: named after the learner's line, some only once a process.

PyTorch's C++ warnings (TORCH_WARN) reach Python attributed to the Python line that called
the op, so Python's default filter shows one per line of the learner's code; `warn` does the
same by naming the first frame outside gradviz. The ones PyTorch raises with TORCH_WARN_ONCE
are shown once per process whatever the filter; `warn_once` keeps that memory.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from .naming import _PACKAGE_DIR

_warned_once: set[str] = set()   # the messages warn_once has already shown

# NumPy's floating-point warnings ("overflow encountered in multiply", "invalid value encountered in
# cast", ...) raised by gradviz's own array code: torch computes the same inf and nan silently. A filter
# costs nothing until a warning is raised (an np.errstate around every op would cost a microsecond), and
# it names only gradviz's modules, so the learner's own NumPy code warns as before.
NUMPY_FLOATING = r"(overflow|underflow|invalid value|divide by zero) encountered|Mean of empty slice|Degrees of freedom"
warnings.filterwarnings("ignore", message=NUMPY_FLOATING, category=RuntimeWarning, module=r"gradviz\.")

# The filter above is lost where the warnings filters are reset after gradviz is imported (pytest's
# per-test catch_warnings, a -W error or simplefilter("error") of the learner's), so the code that meets
# inf and nan as torch does also turns NumPy's floating-point checks off while it runs: `quiet` around
# one op's forward or VJP, and the backward loop around its steps (once a run: a ContextVar set).
try:   # NumPy 2 keeps its error state in a context variable: setting it costs a fifth of np.errstate
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE
    with np.errstate(all="ignore"):
        _IGNORE_ALL = _ERRSTATE.get()

    def floating_checks_off():
        """NumPy's floating-point warnings off (in this context) until `floating_checks_on(token)`."""
        return _ERRSTATE.set(_IGNORE_ALL)

    def floating_checks_on(token) -> None:
        _ERRSTATE.reset(token)
except ImportError:   # NumPy 1: one process-wide state
    def floating_checks_off():
        return np.seterr(all="ignore")

    def floating_checks_on(token) -> None:
        np.seterr(**token)


def quiet(fn):
    """`fn` run with NumPy's floating-point warnings off: PyTorch returns inf/nan silently."""
    def run_quietly(*args):
        token = floating_checks_off()
        try:
            return fn(*args)
        finally:
            floating_checks_on(token)
    return run_quietly


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn, attributed to the first frame outside gradviz."""
    frame, level = sys._getframe(1), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def warn_once(message: str, category: type[Warning] = UserWarning) -> None:
    """TORCH_WARN_ONCE: the first time in this process only, attributed as `warn` does."""
    if message in _warned_once:
        return
    _warned_once.add(message)
    warn(message, category)   # warn skips every gradviz frame, this one included
