"""float64 log, log1p, exp, cos, sin, tan and pow as the C library computes them.

PyTorch's CPU kernels for random draws and logspace call the C library's functions. NumPy does too,
except on machines with AVX-512, where it runs its own SIMD versions, which differ from the C
library's in the last bit now and then. To give torch's numbers bit for bit on every machine, each
function here is NumPy's where NumPy agrees with the C library on a probe of values (checked once,
on first use) and the C library's, called element by element, where it does not.
"""
from __future__ import annotations

import functools
import math

import numpy as np

# The values the draws feed these functions: uniforms in (0, 1), angles in [0, 2π), exponents.
_PROBE = np.concatenate([np.linspace(1e-6, 1 - 1e-6, 2049), np.linspace(0.0, 2 * math.pi, 2049),
                         np.linspace(-40.0, 40.0, 2049)])


def _c_library(ours, theirs, n_args: int, probe: tuple):
    """theirs (a math function) on whole arrays where it differs from ours (its NumPy ufunc) on `probe`."""
    def one(*args):   # NumPy's -inf, inf or nan where the C function raises (log(0), exp(800))
        try:
            return theirs(*args)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(ours(*args))
    elementwise = np.frompyfunc(one, n_args, 1)

    def exact(*args):
        return np.asarray(elementwise(*args), dtype=np.float64)

    @functools.cache
    def agrees() -> bool:
        with np.errstate(all="ignore"):
            return bool(np.array_equal(ours(*probe), exact(*probe), equal_nan=True))

    def fn(*args):
        return ours(*args) if agrees() else exact(*args)
    fn.__name__ = theirs.__name__
    return fn


log, log1p, exp, cos, sin, tan = (_c_library(getattr(np, n), getattr(math, n), 1, (_PROBE,))
                                  for n in ("log", "log1p", "exp", "cos", "sin", "tan"))
power = _c_library(np.power, math.pow, 2, (10.0, _PROBE))   # base ** x, for logspace
