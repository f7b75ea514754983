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


@functools.cache
def _agrees(name: str) -> bool:
    ours, theirs = getattr(np, name), getattr(math, name)
    with np.errstate(all="ignore"):
        values = ours(_PROBE)
    for v, x in zip(values.tolist(), _PROBE.tolist()):
        try:
            if v != theirs(x):
                return False
        except (ValueError, OverflowError):   # outside the C function's domain: NumPy gives nan or inf
            continue
    return True


def _guarded(ours, theirs):
    """The C function on one value; NumPy's -inf, inf or nan where the C one raises (log(0), exp(800))."""
    def one(*args):
        try:
            return theirs(*args)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(ours(*args))
    return one


def _unary(name: str):
    elementwise = np.frompyfunc(_guarded(getattr(np, name), getattr(math, name)), 1, 1)

    def fn(x: np.ndarray) -> np.ndarray:
        if _agrees(name):
            return getattr(np, name)(x)
        return np.asarray(elementwise(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    fn.__name__ = name
    return fn


log, log1p, exp, cos, sin, tan = (_unary(n) for n in ("log", "log1p", "exp", "cos", "sin", "tan"))

_pow = np.frompyfunc(_guarded(np.power, math.pow), 2, 1)


@functools.cache
def _pow_agrees() -> bool:
    return all(v == math.pow(10.0, x) for v, x in zip(np.power(10.0, _PROBE[-2049:]).tolist(), _PROBE[-2049:].tolist()))


def power(base: float, x: np.ndarray) -> np.ndarray:
    """base ** x for a float base: NumPy's, or the C library's pow where they differ."""
    if _pow_agrees():
        return np.power(base, x)
    return np.asarray(_pow(base, np.asarray(x, dtype=np.float64)), dtype=np.float64)
