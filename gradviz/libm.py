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


# -- fused multiply-add: a * b + c rounded once, as torch's CPU builds compute the steps they contract --
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _to_odd(s, err):
    """Round-to-odd of the exact value s + err (|err| below half an ulp of s): keeps the sticky
    information a second rounding needs, so RN(RO(x)) is the correctly rounded x."""
    fix = (err != 0) & ((s.view(np.int64) & 1) == 0)
    if fix.any():
        s = s.copy()
        s[fix] = np.nextafter(s[fix], np.where(err[fix] > 0, np.inf, -np.inf))
    return s


def fma64(a, b, c) -> np.ndarray:
    """std::fma in doubles: an exact product (Dekker) and sum, rounded once."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    if c.ndim == 0 and c == 0:
        return a * b + c            # one rounding; adding the zero gives fma's sign for a zero product
    p = a * b
    split = 134217729.0
    ah = a * split; ah = ah - (ah - a); al = a - ah
    bh = b * split; bh = bh - (bh - b); bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s, t = _two_sum(p, np.broadcast_to(c, p.shape))
    w, err = _two_sum(t, e)
    return s + _to_odd(np.atleast_1d(w), np.atleast_1d(err)).reshape(w.shape)


def fma(a, b, c, dtype) -> np.ndarray:
    """a * b + c rounded once, in doubles for float64 and in floats otherwise: the steps that torch's
    CPU builds contract to one FMA instruction."""
    return fma64(a, b, c) if np.dtype(dtype) == np.float64 else fma32(a, b, c)


def fma32(a, b, c, tiny: bool = True) -> np.ndarray:
    """A fused float32 a * b + c. The product is exact in doubles, so the double sum rounded to
    float32 is the fused result unless it sits exactly on a float32 tie (or, when `tiny`, below
    float32's normal range, zero aside: a double sum of 0 is exact); those few are rounded to odd in
    doubles first, which settles them."""
    if np.ndim(c) == 0 and c == 0:
        return np.multiply(a, b, dtype=np.float32) + np.float32(c)   # as above: fma's sign for a zero product
    s = np.multiply(a, b, dtype=np.float64)
    s += c
    out = s.astype(np.float32)
    suspect = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    if tiny:
        suspect |= (np.abs(s) < 2.0 ** -125) & (s != 0)
    if suspect.any():
        where = np.nonzero(suspect)   # the few, found once, then widened
        pick = [np.broadcast_to(v, s.shape)[where].astype(np.float64) for v in (a, b, c)]
        ss, t = _two_sum(pick[0] * pick[1], pick[2])
        out[where] = _to_odd(ss, t).astype(np.float32)
    return out
