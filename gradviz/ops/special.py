"""Special functions on whole arrays: erf, erfc, erfinv, lgamma, digamma, polygamma.

On the CPU, erf is Cephes' rational approximations (W. J. Cody's forms), accurate to a few units in
the last place of float64 (float32's inner part a polynomial of its own, within 2 of float32), so that
GELU runs at NumPy speed and not one Python call per element; the others are built on it and on NumPy.
On a GPU each is cupyx.scipy.special's.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import backend


# cupyx.scipy.special's names that the functions here hand over to on a GPU -> their CPU code (the
# tests' CuPy stand-in offers exactly these, computed by the CPU code)
ON_GPU: dict = {}


def _cupyx_on_gpu(name: str):
    """Run cupyx.scipy.special.`name` when the (last) argument lives on a GPU; the arguments before
    it (polygamma's order n) go in as arrays there, which cupyx's kernels need."""
    def wrap(fn):
        ON_GPU[name] = fn

        @functools.wraps(fn)
        def run(*args):
            *orders, a = args
            if backend.on_cpu(a):
                return fn(*args)
            xp = backend.namespace_of(a)
            return getattr(backend.gpu_special(), name)(*(xp.asarray(n) for n in orders), a)
        return run
    return wrap

# erf(x) = x T(x²)/U(x²) for |x| ≤ 1; erfc(x) = e^(−x²) P(|x|)/Q(|x|) below 8, e^(−x²) R/S above
_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3, 7.00332514112805075473E3,
      5.55923013010394962768E4)
_U = (3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3, 2.26290000613890934246E4,
      4.92673942608635921086E4)
_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0, 4.86371970985681366614E1,
      1.96520832956077098242E2, 5.26445194995477358631E2, 9.34528527171957607540E2, 1.02755188689515710272E3,
      5.57535335369399327526E2)
_Q = (1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2, 9.75708501743205489753E2,
      1.82390916687909736289E3, 2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2)
_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0, 6.16021097993053585195E0,
      7.40974269950448939160E0, 2.97886665372100240670E0)
_S = (2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1, 1.70814450747565897222E1,
      9.60896809063285878198E0, 3.36907645100081516050E0)
# float32's inner form, erf(x) = x E(x²) for |x| ≤ 1: E of degree 5, fitted to erf(x)/x (least squares
# weighted by 1/E on Chebyshev nodes; 4e-8 apart relatively), evaluated in float32. Over every float32
# in [1e-4, 1] it is within 2 units in the last place (0.55 on average) where T/U in float32 was within
# 3 (0.41 on average, every third float32): eleven passes over the array where T/U took nineteen and a
# division
_E32 = (-0.0005625396, 0.0049160235, -0.02670995, 0.112801306, -0.3761232, 1.1283791)


def _poly(x, coefs, monic=False):
    """Horner's rule into one fresh array; monic: a leading coefficient of 1 that the table leaves out."""
    r = np.add(x, coefs[0]) if monic else np.multiply(x, coefs[0])
    if not monic:
        r += coefs[1]
    for c in coefs[1 if monic else 2:]:
        r *= x
        r += c
    return r


@_cupyx_on_gpu("erf")
def erf(a):
    """erf(a) in a's dtype (erf(±inf) = ±1, nan stays nan)."""
    # float32 is evaluated in float32 (within 2 units in its last place, as PyTorch's own float32 erf
    # is within 1): half the memory traffic; every other dtype in float64
    x = a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)
    # a 0-d array as one element: its arithmetic gives NumPy scalars, which out= cannot take
    out = _erf(x.reshape(1)).reshape(()) if x.ndim == 0 else _erf(x)
    return out.astype(a.dtype, copy=False) if a.dtype.kind == "f" else out


_NONE = np.empty(0, dtype=np.intp)   # no elements beyond 1


def _erf(x):
    """erf of a float32 or float64 array of at least one dimension. The inner form runs on the whole
    array (most elements take it, and gathering them costs more than computing the rest), the outer
    one only on the elements beyond 1."""
    # three whole arrays (x², T, U; float32 two: x², E), the fewest the forms allow: every fresh array
    # past the heap's top costs its page faults again when freeing trims the heap (on a GPT's GELU
    # they were half of erf)
    with np.errstate(all="ignore"):   # the inner form overflows where |x| is large: replaced below
        z = np.multiply(x, x)
        # |x| > 1 exactly where x² > 1 (squaring rounds monotonically and (1 + ulp)² rounds above 1;
        # NaN included): the elements beyond 1, as flat positions found once, and looked for only when
        # the largest x² is not ≤ 1 (NaN is not): one reduction, 4 µs on a GPT's GELU, where the
        # search takes 30 µs and, early in training, finds nothing
        outer = z.size and not np.maximum.reduce(z, axis=None) <= 1
        at = np.flatnonzero(np.logical_not(np.less_equal(z, 1))) if outer else _NONE
        out = _poly(z, _E32 if x.dtype == np.float32 else _T)   # written into the fresh array
        out *= x   # x E, or x T/U (x T is T x to the bit)
        if x.dtype != np.float32:
            out /= _poly(z, _U, monic=True)
    if at.size:   # the few elements beyond 1 are gathered, computed and written back
        xo = np.take(x, at)
        ao = np.minimum(np.abs(xo), x.dtype.type(10))   # erf is ±1 to double precision beyond 6 (inf stays finite)
        e = np.exp(-(ao * ao))
        erfc = e * _poly(ao, _P) / _poly(ao, _Q, monic=True)
        far = ao >= 8
        if far.any():
            erfc[far] = (e * _poly(ao, _R) / _poly(ao, _S, monic=True))[far]
        beyond = np.where(np.isnan(xo), xo, np.copysign(1 - erfc, xo))
        if out.flags.c_contiguous:
            out.reshape(-1)[at] = beyond   # (a view of out)
        else:
            np.put(out, at, beyond)
    return out


# -- special functions on whole arrays (float64 inside; the caller casts back) --------------
@_cupyx_on_gpu("erfc")
def erfc(a):
    """1 − erf(a), accurate where erf(a) is near 1: Cephes' e^(−a²) P(|a|)/Q(|a|) (R/S from 8 on)."""
    x = np.asarray(a, dtype=np.float64)
    ax = np.abs(x)
    out = np.empty_like(x)
    inner = ax < 1
    out[inner] = 1 - erf(x[inner])
    outer = ~inner
    xo, ao = x[outer], np.minimum(ax[outer], 30.0)   # beyond 27 erfc underflows to 0
    with np.errstate(all="ignore"):
        e = np.exp(-(ao * ao))
        tail = np.where(ao < 8, e * _poly(ao, _P) / _poly(ao, _Q, monic=True),
                        e * _poly(ao, _R) / _poly(ao, _S, monic=True))
    out[outer] = np.where(np.isnan(xo), xo, np.where(xo < 0, 2 - tail, tail))
    return out


@_cupyx_on_gpu("erfinv")
def erfinv(y):
    """The inverse of erf: Giles' single-precision start, then Newton steps on erf (on erfc in the
    tails, where 1 − |y| is exact and erf(x) − |y| would cancel)."""
    y = np.asarray(y, dtype=np.float64)
    ay = np.abs(y)
    with np.errstate(all="ignore"):
        w = -np.log((1 - ay) * (1 + ay))
        lo = w - 2.5
        p_lo = _poly(lo, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                          -0.00125372503, -0.00417768164, 0.246640727, 1.50140941))
        hi = np.sqrt(w) - 3
        p_hi = _poly(hi, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                          -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
        x = np.where(w < 5, p_lo, p_hi) * ay
        for _ in range(4):   # the tails: Newton on log erfc(x) = log(1 − |y|), well scaled there
            slope = 2 / np.sqrt(np.pi) * np.exp(-(x * x))
            tail = erfc(x)
            x = x - np.where(ay < 0.5, (erf(x) - ay) / slope, (np.log(1 - ay) - np.log(tail)) * tail / slope)
        x = np.where(ay == 1, np.inf, np.where(ay > 1, np.nan, x))
    return np.copysign(x, y)


def _lgamma1(v: float) -> float:
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):   # the poles 0, −1, −2, ...
        return math.inf


_lgamma_u = np.frompyfunc(_lgamma1, 1, 1)


@_cupyx_on_gpu("gammaln")
def lgamma(a):
    """log |Γ(a)|, +inf at the poles (as PyTorch)."""
    return np.asarray(_lgamma_u(np.asarray(a, dtype=np.float64)), dtype=np.float64)


@_cupyx_on_gpu("digamma")
def digamma(a):
    """ψ(a) = Γ′(a)/Γ(a): shifted up to 10 by ψ(x) = ψ(x + 1) − 1/x, then the asymptotic series;
    below 0 the reflection ψ(x) = ψ(1 − x) − π / tan(πx); ψ(±0) = ∓inf, nan at negative integers."""
    x = np.array(a, dtype=np.float64)
    with np.errstate(all="ignore"):
        neg = x < 0
        reflect = np.where(neg, -np.pi / np.tan(np.pi * np.fmod(x, 1.0)), 0.0)
        reflect = np.where(neg & (x == np.trunc(x)), np.nan, reflect)
        x = np.where(neg, 1 - x, x)
        shift = np.zeros_like(x)
        for _ in range(10):
            small = x < 10
            if not small.any():
                break
            shift -= np.where(small, 1 / x, 0.0)
            x = np.where(small, x + 1, x)
        z = 1 / (x * x)
        series = z * _poly(z, (-1 / 12, 691 / 32760, -1 / 132, 1 / 240, -1 / 252, 1 / 120, -1 / 12))
        out = np.log(x) - 0.5 / x + series + shift + reflect
        zero = np.asarray(a, dtype=np.float64) == 0
        out = np.where(zero, np.copysign(np.inf, -np.asarray(a, dtype=np.float64)), out)
    return out


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798)


@_cupyx_on_gpu("polygamma")
def polygamma(n: int, a):
    """ψ⁽ⁿ⁾(a) = (−1)ⁿ⁺¹ n! ζ(n + 1, a) for n ≥ 1 (ψ⁽⁰⁾ is digamma): the Hurwitz zeta summed
    directly until the argument passes 20, then its Euler–Maclaurin tail."""
    if n == 0:
        return digamma(a)
    x = np.array(a, dtype=np.float64) + 0.0   # −0 is a pole like +0
    s = n + 1
    with np.errstate(all="ignore"):
        total = np.zeros_like(x)
        steps = int(np.clip(np.ceil(20 - np.nanmin(x, initial=20.0)), 0, 10_000)) if x.size else 0
        for _ in range(steps):
            small = x < 20
            total += np.where(small, x ** -s, 0.0)
            x = np.where(small, x + 1, x)
        tail = x ** (1 - s) / (s - 1) + 0.5 * x ** -s
        rising, fact = float(s), 2.0   # s (s+1) ... (s+2j−2) and (2j)!
        for j, b in enumerate(_BERNOULLI, start=1):
            tail += b / fact * rising * x ** (-s - 2 * j + 1)
            rising *= (s + 2 * j - 1) * (s + 2 * j)
            fact *= (2 * j + 1) * (2 * j + 2)
        zeta = total + tail
    return (-1) ** (n + 1) * math.factorial(n) * zeta
