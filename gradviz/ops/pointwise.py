"""Elementwise ops: a table of derivatives. Each VJP returns the gradient in the
broadcast shape; the engine sums it back to the input's shape."""
from __future__ import annotations

import math

import numpy as np

from .._warn import quiet
from ..dtypes import float16, float32, get_default_dtype, result_type
from .core import contiguous
from .op import Exposure, Op
from . import special as _special


SQRT_2, SQRT_2PI = math.sqrt(2.0), math.sqrt(2.0 * math.pi)


def fused_one_minus_square(xp, y):
    """1 − y² rounded once, as the fused multiply-add in torch's kernels for tanh's and asin's
    derivatives computes it, so those gradients have torch's bits. Float64 by an exact split of
    y² (Dekker's product and a two-sum); narrower types through float64, then float32 as torch.
    On Tensors (create_graph) it is 1 − y·y, so the recorded graph is torch's."""
    if not xp.arrays:
        return 1 - y * y
    if y.dtype == xp.float64:
        p = y * y
        t = y * 134217729.0                      # 2^27 + 1: y = hi + lo with half the bits each
        hi = t - (t - y)
        lo = y - hi
        e = ((hi * hi - p) + 2 * hi * lo) + lo * lo   # y² = p + e exactly
        s = 1 - p
        b = s - 1
        return s + (((1 - (s - b)) + (-p - b)) - e)   # (1 − p exactly as s + err) − e, one rounding
    wide = y.astype(xp.float64)
    return (1 - wide * wide).astype(xp.float32)


def tanh_grad(xp, g, y):
    """g ⊙ (1 − y²) as torch's tanh_backward: a fused 1 − y², and half precision computed in float32."""
    if not xp.arrays:
        return g * (1 - y * y)
    product = g.astype(xp.float32, copy=False) * fused_one_minus_square(xp, y) if y.dtype.itemsize <= 4 else \
        g * fused_one_minus_square(xp, y)
    return product.astype(y.dtype, copy=False)


_HALF, _FLOAT = float16.np, float32.np


def times(xp, t, s):
    """t · s for a number s as torch's mul(Tensor, Scalar) computes it (the `grad * alpha` and
    `exponent * self.pow(exponent - 1)` of its backward formulas): float16 in float32, s read as float32
    (the kernel's op-math type), rounded once; NumPy would round s to float16 first."""
    if t.dtype is _HALF:   # (a Tensor's dtype, under create_graph, is not NumPy's)
        return _times_half(t, s)
    return t * s


@quiet   # (as torch: an overflow is an inf, silently)
def _times_half(t, s):
    return (t.astype(_FLOAT) * np.float32(s)).astype(_HALF)


def opmath_number(a, s):
    """A number s as torch's float16 kernels read it beside an array a (threshold's and hardtanh_backward's
    bounds): float32, their op-math type, so a float16 0.1 (0.0999755859375) lies below a bound of 0.1;
    s itself for other dtypes."""
    return np.float32(s) if getattr(a, "dtype", None) is _HALF else s


def over(xp, t, s):
    """t / s for a number s as torch's div(Tensor, Scalar) computes it (see times)."""
    if t.dtype is _HALF:
        return _over_half(t, s)
    return t / s


@quiet
def _over_half(t, s):
    return (t.astype(_FLOAT) / np.float32(s)).astype(_HALF)


def add_scaled(xp, a, b, alpha):
    """a + α b as torch's add kernel computes it: α in the tensors' dtype, then a fused multiply-add. For
    float16 that is float32 arithmetic (the product of two float16 numbers is exact there) rounded once
    to float16, where NumPy would round the product and then the sum."""
    if a.dtype is _HALF and b.dtype is _HALF:
        return _add_scaled_half(a, b, alpha)
    return a + b * alpha


@quiet
def _add_scaled_half(a, b, alpha):
    return (a.astype(_FLOAT) + b.astype(_FLOAT) * np.float32(np.float16(alpha))).astype(_HALF)


def torch_pow(xp, a, p):
    """a ** p for a number p as torch computes it: exact products for 2, 3 and −2, 1/√a for −½
    (NumPy's own fast paths already give torch's ½, −1 and 2). float16 has none of these: torch's half
    kernel is pow in float32 of p rounded to float16, rounded once, which is NumPy's float16 power (np.power:
    `**` would take √ for ½, and √−0 is −0 where pow gives +0)."""
    if not xp.arrays or a.dtype.kind != "f":
        return a ** p
    if a.dtype is _HALF:
        return xp.power(a, p)
    if p == 3:
        return a * a * a
    if p == -2:
        return 1 / (a * a)
    if p == -0.5:
        return 1 / xp.sqrt(a)
    return a ** p


def integer_pow(xp, a, b):
    """a ** b, where an integer power below 0 is torch's integer one (1 for a base of 1, ±1 for −1, else 0)
    and not NumPy's refusal."""
    if not xp.arrays:
        return a ** b
    b = xp.asarray(b)
    if b.dtype.kind not in "iu" or xp.asarray(a).dtype.kind not in "iu" or not (b < 0).any():
        return a ** b
    result = a ** xp.where(b < 0, 0, b)
    negative = xp.where(a == 1, 1, xp.where(a == -1, xp.where(b % 2 == 0, 1, -1), 0))
    return xp.where(b < 0, negative, result).astype(result.dtype)


BINARY = ("self", "other")

ADD = Op("add", "AddBackward0", r"$c = $0 + $1", lambda xp, a, b: a + b,
         vjp=(lambda xp, g, c, a, b: g, lambda xp, g, c, a, b: g), args=BINARY,
         vjp_latex=(r"\bar{g}", r"\bar{g}",),
         broadcasts=None, jvp="linear")
SUB = Op("sub", "SubBackward0", r"$c = $0 - $1", lambda xp, a, b: a - b,
         vjp=(lambda xp, g, c, a, b: g, lambda xp, g, c, a, b: -g), args=BINARY,
         vjp_latex=(r"\bar{g}", r"-\bar{g}",),
         broadcasts=None, jvp="linear")
# add/sub with alpha ≠ 1 stay one node, as in PyTorch (c = a + α b)
ADD_ALPHA = Op("add", "AddBackward0", r"$c = $0 + $alpha\, $1", add_scaled,
               vjp=(lambda xp, g, c, a, b, alpha: g, lambda xp, g, c, a, b, alpha: times(xp, g, alpha)), args=BINARY, params=("alpha",),
               vjp_latex=(r"\bar{g}", r"$alpha\, \bar{g}",),
               broadcasts=None, jvp="pointwise")   # torch: self_t + maybe_multiply(other_t, alpha), two roundings
SUB_ALPHA = Op("sub", "SubBackward0", r"$c = $0 - $alpha\, $1", lambda xp, a, b, alpha: add_scaled(xp, a, b, -alpha),
               vjp=(lambda xp, g, c, a, b, alpha: g, lambda xp, g, c, a, b, alpha: times(xp, g, -alpha)), args=BINARY, params=("alpha",),
               vjp_latex=(r"\bar{g}", r"-$alpha\, \bar{g}",),
               broadcasts=None, jvp="pointwise")   # torch: self_t - maybe_multiply(other_t, alpha), two roundings
# torch.rsub(a, b) = b − α a; with a Python number b (what `2 - x` calls) b is no input at all
RSUB = Op("rsub", "RsubBackward0", r"$c = $1 - $alpha\, $0", lambda xp, a, b, alpha: add_scaled(xp, b, a, -alpha),
          vjp=(lambda xp, g, c, a, b, alpha: times(xp, g, -alpha), lambda xp, g, c, a, b, alpha: g), args=BINARY, params=("alpha",),
          vjp_latex=(r"-$alpha\, \bar{g}", r"\bar{g}",),
          broadcasts=None, jvp="pointwise")
RSUB_SCALAR = Op("rsub", "RsubBackward1", r"$c = $other - $alpha\, $0",
                 lambda xp, a, s, alpha: add_scaled(xp, s, a, -alpha) if alpha != 1 else s - a,
                 vjp=(lambda xp, g, c, a, s, alpha: -g if alpha == 1 else times(xp, g, -alpha),), params=("other", "alpha"),
                 vjp_latex=(r"-$alpha\, \bar{g}",), jvp="pointwise")
MUL = Op("mul", "MulBackward0", r"$c = $0 \odot $1", lambda xp, a, b: a * b,
         vjp=(lambda xp, g, c, a, b: g * b, lambda xp, g, c, a, b: g * a), args=BINARY, saves=BINARY,
         vjp_latex=(r"\bar{g} \odot $1", r"\bar{g} \odot $0",),
         broadcasts=None, jvp="bilinear")
DIV = Op("div", "DivBackward0", r"$c = \frac{$0}{$1}", quiet(lambda xp, a, b: a / b),
         vjp=(quiet(lambda xp, g, c, a, b: g / b), quiet(lambda xp, g, c, a, b: -g * ((a / b) / b))), args=BINARY, saves=BINARY,
         vjp_latex=(r"\frac{\bar{g}}{$1}", r"-\frac{\bar{g} \odot $0}{$1^2}",),
         broadcasts=None, jvp="pointwise")
POW = Op("pow", "PowBackward1", r"$c = $0^{$1}", quiet(integer_pow),
         vjp=(quiet(lambda xp, g, c, a, b: xp.where(b == 0, 0, g * b * a ** (b - 1))),
              quiet(lambda xp, g, c, a, b: xp.where((a == 0) & (b >= 0), 0, g * c * xp.log(a)))), args=("self", "exponent"), saves=("self", "exponent", "result"),
         symbols=("a", "b"),
         vjp_latex=(r"\bar{g} \odot $1 \odot $0^{$1 - 1}", r"\bar{g} \odot $c \odot \log $0",),
         broadcasts=None, jvp="pointwise")
POW_SCALAR = Op("pow", "PowBackward0", r"$c = $0^{$exponent}", quiet(torch_pow),
                vjp=(quiet(lambda xp, g, c, a, p: xp.zeros_like(g) if p == 0 else g * times(xp, torch_pow(xp, a, p - 1), p)),), params=("exponent",), saves=("self",),
                vjp_latex=(r"\bar{g} \odot $exponent\, $0^{$exponent - 1}",), jvp="pointwise")
RPOW_SCALAR = Op("pow", "PowBackward2", r"$c = $self^{$0}", quiet(lambda xp, a, s: integer_pow(xp, s, a)),
                 vjp=(quiet(lambda xp, g, c, a, s: g * times(xp, c, math.log(s)) if s > 0 else
                            g * xp.where(a >= 0, 0, times(xp, c, _log_or_nan(s))) if s == 0 else
                            g * times(xp, c, _log_or_nan(s))),), args=("exponent",), params=("self",), saves=("result",), shown=("self",),
                 vjp_latex=(r"\bar{g} \odot $c \log $self",), jvp="pointwise")


def half_in_float(fn):
    """fn of float16 arrays computed in float32 and rounded once at the end, as torch's CPU kernels
    compute half precision, where NumPy rounds each float16 step (σ, GELU, softplus, SiLU, ... were a
    unit or two in the last place from torch's on one input in five). The first argument decides (the
    input of a forward, ḡ of a VJP); of a forward that keeps (output, kept), the output is rounded."""
    def widened(xp, first, *rest, **kept):
        out = fn(xp, first.astype(np.float32),
                 *(x.astype(np.float32) if getattr(x, "dtype", None) is _HALF else x for x in rest), **kept)
        return (out[0].astype(_HALF),) + out[1:] if type(out) is tuple else out.astype(_HALF)

    # one wrapper per arity (a forward (xp, a, *params), a VJP (xp, g, c, a, *params)): packing the
    # arguments would cost another 150 ns a call on every dtype. (A Tensor's dtype, under create_graph,
    # is not NumPy's either.)
    arity = None if fn.__defaults__ else fn.__code__.co_argcount
    if arity == 2:
        def run(xp, a):
            return fn(xp, a) if a.dtype is not _HALF else widened(xp, a)
    elif arity == 3:
        def run(xp, a, b):
            return fn(xp, a, b) if a.dtype is not _HALF else widened(xp, a, b)
    elif arity == 4:
        def run(xp, a, b, c):
            return fn(xp, a, b, c) if a.dtype is not _HALF else widened(xp, a, b, c)
    elif arity == 5:
        def run(xp, a, b, c, d):
            return fn(xp, a, b, c, d) if a.dtype is not _HALF else widened(xp, a, b, c, d)
    else:
        def run(xp, first, *rest, **kept):
            return fn(xp, first, *rest, **kept) if first.dtype is not _HALF else widened(xp, first, *rest, **kept)
    return run


def _unary(name, torch_name, latex, forward, vjp, vjp_latex, saves=("self",), params=(), **display):
    return Op(name, torch_name, latex, forward, vjp=(vjp,), vjp_latex=(vjp_latex,), params=params, saves=saves,
              **display)


NEG = _unary("neg", "NegBackward0", r"$c = -$0",
             lambda xp, a: -a, lambda xp, g, c, a: -g, r"-\bar{g}", saves=(), jvp="linear")
EXP = _unary("exp", "ExpBackward0", r"$c = e^{$0}", quiet(half_in_float(lambda xp, a: xp.exp(a))),
             lambda xp, g, c, a: g * c,
             r"\bar{g} \odot $c", saves=("result",), jvp="pointwise")
LOG = _unary("log", "LogBackward0", r"$c = \log $0", quiet(lambda xp, a: xp.log(a)), quiet(lambda xp, g, c, a: g / a),
             r"\frac{\bar{g}}{$0}", jvp="pointwise")
LOG1P = _unary("log1p", "Log1PBackward0", r"$c = \log(1 + $0)", quiet(lambda xp, a: xp.log1p(a)),
               quiet(lambda xp, g, c, a: g / (a + 1)), r"\frac{\bar{g}}{1 + $0}", jvp="pointwise")
SQRT = _unary("sqrt", "SqrtBackward0", r"$c = \sqrt{$0}", quiet(lambda xp, a: xp.sqrt(a)),
              quiet(lambda xp, g, c, a: g / (c * 2)), r"\frac{\bar{g}}{2 $c}", saves=("result",), jvp="pointwise")
RSQRT = _unary("rsqrt", "RsqrtBackward0", r"$c = \frac{1}{\sqrt{$0}}", quiet(half_in_float(lambda xp, a: 1 / xp.sqrt(a))),
               lambda xp, g, c, a: g * (-0.5 * c * c * c), r"-\frac{\bar{g} \odot $c^3}{2}", saves=("result",), jvp="pointwise")
RECIPROCAL = _unary("reciprocal", "ReciprocalBackward0", r"$c = \frac{1}{$0}", quiet(lambda xp, a: 1 / a),
                    lambda xp, g, c, a: -g * (c * c), r"-\bar{g} \odot $c^2", saves=("result",), jvp="pointwise")
SIN = _unary("sin", "SinBackward0", r"$c = \sin $0", lambda xp, a: xp.sin(a), lambda xp, g, c, a: g * xp.cos(a),
             r"\bar{g} \odot \cos $0", jvp="pointwise")
# torch's rule is grad * -self.sin(): the negation is on sin a (NegBackward0 under create_graph)
COS = _unary("cos", "CosBackward0", r"$c = \cos $0", half_in_float(lambda xp, a: xp.cos(a)),
             lambda xp, g, c, a: g * -xp.sin(a),
             r"-\bar{g} \odot \sin $0", jvp="pointwise")
TAN = _unary("tan", "TanBackward0", r"$c = \tan $0", lambda xp, a: xp.tan(a), lambda xp, g, c, a: g * (c * c + 1),
             r"\bar{g} \odot (1 + $c^2)", saves=("result",), jvp="pointwise")
TANH = _unary("tanh", "TanhBackward0", r"$c = \tanh $0", lambda xp, a: xp.tanh(a),
              lambda xp, g, c, a: tanh_grad(xp, g, c), r"\bar{g} \odot (1 - $c^2)", saves=("result",), jvp="pointwise")
SIGMOID = _unary("sigmoid", "SigmoidBackward0", r"$c = \sigma($0) = \frac{1}{1 + e^{-$0}}",
                 quiet(half_in_float(lambda xp, a: 1 / (1 + xp.exp(-a)))),
                 lambda xp, g, c, a: g * (1 - c) * c, r"\bar{g} \odot $c \odot (1 - $c)", saves=("result",), jvp="pointwise")
# relu's ḡ passes where c > 0 and where c is NaN, as PyTorch's threshold_backward: on arrays
# that mask is not (c ≤ 0), two passes where (c > 0) | (c ≠ c) makes three
RELU = _unary("relu", "ReluBackward0", r"$c = \max($0,\, 0)", lambda xp, a: xp.maximum(a, 0),
              lambda xp, g, c, a: xp.keep(g, ~(c <= 0) if xp.arrays else (c > 0) | (c != c)), r"\bar{g} \odot [$c > 0]", saves=("result",), jvp="pointwise")
LEAKY_RELU = _unary("leaky_relu", "LeakyReluBackward0",
                    r"$c = \begin{cases} $0 & $0 > 0 \\ $negative_slope\, $0 & \text{otherwise} \end{cases}",
                    half_in_float(lambda xp, a, s: xp.where(a > 0, a, a * s)),
                    half_in_float(lambda xp, g, c, a, s: xp.where(a > 0, g, g * s)), r"\bar{g} \odot \begin{cases} 1 & $0 > 0 \\ $negative_slope & \text{otherwise} \end{cases}", params=("negative_slope",),
                    jvp="pointwise")
# leaky_relu_ (in place) saves its result, not its overwritten input: a positive slope keeps each sign
LEAKY_RELU_RESULT = _unary("leaky_relu_", "LeakyReluBackward1",
                           r"$c = \begin{cases} $0 & $0 > 0 \\ $negative_slope\, $0 & \text{otherwise} \end{cases}",
                           LEAKY_RELU.forward, lambda xp, g, c, a, s: xp.where(c > 0, g, g * s),
                           r"\bar{g} \odot \begin{cases} 1 & $c > 0 \\ $negative_slope & \text{otherwise} \end{cases}",
                           saves=("result",), params=("negative_slope",), jvp="pointwise")
ERF = _unary("erf", "ErfBackward0", r"$c = \operatorname{erf} $0", lambda xp, a: xp.erf(a),
             lambda xp, g, c, a: g * xp.exp(-(a * a)) * (2 / math.sqrt(math.pi)), r"\bar{g} \odot \frac{2}{\sqrt{\pi}} e^{-$0^2}", jvp="pointwise")
def _gelu_keeping(xp, a):
    # on arrays only (a forward): each step writes into the fresh array the step before made
    e1 = xp.erf(a / SQRT_2)
    e1 += 1   # 2 Φ(a): kept for the VJP, which reads it again
    out = a * e1
    out *= 0.5
    return out, e1


def _gelu_vjp(xp, g, c, a, kept=None):
    if kept is None:   # also on Tensors (a create_graph backward records these steps): no writes in place
        e1 = xp.erf(a / SQRT_2) + 1
        return g * (e1 * 0.5 + a * xp.exp(a * a * -0.5) / SQRT_2PI)
    d = a * a   # arrays: the same steps, each written into the fresh array the step before made
    d *= -0.5
    d = xp.exp(d)
    d *= a
    d /= SQRT_2PI
    d += kept * 0.5
    if d.dtype != g.dtype or d.shape != g.shape:
        return g * d
    d *= g
    return d


GELU = _unary("gelu", "GeluBackward0", r"$c = $0\, \Phi($0)", None, half_in_float(_gelu_vjp),
              r"\bar{g} \odot \left(\Phi($0) + $0\, \varphi($0)\right)", jvp="pointwise", keeps=half_in_float(_gelu_keeping))
GELU_TANH = _unary("gelu", "GeluBackward0", r"$c = $0\, \tilde{\Phi}($0) \text{ (tanh approximation)}",
                   half_in_float(lambda xp, a: a * 0.5 * (1 + xp.tanh(math.sqrt(2 / math.pi)
                                                                       * (a + 0.044715 * a * a * a)))),
                   half_in_float(lambda xp, g, c, a: g * _gelu_tanh_grad(xp, a)), r"\bar{g} \odot \tilde{\Phi}'($0)", jvp="pointwise")


def _gelu_tanh_grad(xp, a):
    k = math.sqrt(2 / math.pi)
    t = xp.tanh(k * (a + 0.044715 * a * a * a))
    return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * k * (1 + 3 * 0.044715 * a * a)


SOFTPLUS = _unary("softplus", "SoftplusBackward0", r"$c = \frac{\log(1 + e^{$beta\, $0})}{$beta}",
                  quiet(half_in_float(lambda xp, a, beta, threshold:
                                      xp.where(a * beta > threshold, a, xp.log1p(xp.exp(a * beta)) / beta))),
                  quiet(half_in_float(lambda xp, g, c, a, beta, threshold:
                                      xp.where(a * beta > threshold, g, g / (1 + xp.exp(-(a * beta)))))),
                  r"\bar{g} \odot \sigma($beta\, $0)", params=("beta", "threshold"), jvp="pointwise")
ABS = _unary("abs", "AbsBackward0", r"$c = |$0|", lambda xp, a: xp.abs(a), lambda xp, g, c, a: g * xp.sign(a),
             r"\bar{g} \odot \operatorname{sign} $0", jvp="pointwise")
# sign(NaN) is 0 in PyTorch
SIGN = _unary("sign", "SignBackward0", r"$c = \operatorname{sign} $0", lambda xp, a: xp.where(a != a, 0, xp.sign(a)),
              lambda xp, g, c, a: xp.zeros_like(g), "0",
              saves=(), jvp="pointwise")
CLAMP = _unary("clamp", "ClampBackward1", r"$c = \operatorname{clamp}($0,\, $min,\, $max)",
               lambda xp, a, lo, hi: xp.clip(a, lo, hi),
               lambda xp, g, c, a, lo, hi: xp.keep(g, _in_range(a, lo, hi)), r"\bar{g} \odot [$min \le $0 \le $max]",
               params=("min", "max"), jvp="pointwise")


# clamp with tensor bounds: the bounds are inputs too (ḡ flows to min where a < min, to max where a > max;
# where min > max the result is max, so max gets ḡ and min gets none)
CLAMP_TENSOR = Op("clamp", "ClampBackward0", r"$c = \operatorname{clamp}($0,\, $1,\, $2)",
                  lambda xp, a, lo, hi, has_lo, has_hi: xp.clip(a, lo if has_lo else None, hi if has_hi else None),
                  vjp=(lambda xp, g, c, a, lo, hi, has_lo, has_hi:
                       xp.keep(g, _in_range(a, lo if has_lo else None, hi if has_hi else None)),
                       lambda xp, g, c, a, lo, hi, has_lo, has_hi: xp.keep(g, (a < lo) & (lo < hi) if has_hi else a < lo),
                       lambda xp, g, c, a, lo, hi, has_lo, has_hi: xp.keep(g, (a > hi) | (hi < lo) if has_lo else a > hi)), args=("self", "min", "max"),
                  symbols=("a", "lo", "hi"),
                  params=("has_min", "has_max"), saves=("self", "min", "max"),
                  vjp_latex=(r"\bar{g} \odot [$1 \le $0 \le $2]", r"\bar{g} \odot [$0 < $1]", r"\bar{g} \odot [$0 > $2]",),
                  broadcasts=None, jvp="pointwise")


def _in_range(a, lo, hi):
    mask = a == a
    if lo is not None:
        mask = mask & (a >= lo)
    if hi is not None:
        mask = mask & (a <= hi)
    return mask


WHERE = Op("where", "WhereBackward0", r"$c = \begin{cases} $0 & \mathrm{cond} \\ $1 & \text{otherwise} \end{cases}",
           lambda xp, a, b, cond: xp.where(cond, a, b),
           vjp=(lambda xp, g, c, a, b, cond: xp.where(cond, g, 0),
                lambda xp, g, c, a, b, cond: xp.where(cond, 0, g)), args=BINARY, params=("condition",), saves=("condition",),
           shown=(),
           vjp_latex=(r"\bar{g} \odot \mathrm{cond}", r"\bar{g} \odot \neg \mathrm{cond}",),
           broadcasts=None, jvp="pointwise")
# ties split the gradient evenly, as PyTorch does; written as "ḡ except where the other is larger", so
# that a NaN, which compares false, gets ḡ as in PyTorch
MAXIMUM = Op("maximum", "MaximumBackward0", r"$c = \max($0,\, $1)", lambda xp, a, b: xp.maximum(a, b),
             vjp=(lambda xp, g, c, a, b: xp.where(a < b, 0, xp.where(a == b, g * 0.5, g)),
                  lambda xp, g, c, a, b: xp.where(a > b, 0, xp.where(a == b, g * 0.5, g))), args=BINARY, saves=BINARY,
             vjp_latex=(r"\bar{g} \odot \begin{cases} 0 & $0 < $1 \\ \tfrac{1}{2} & $0 = $1 \\ 1 & \text{otherwise} \end{cases}", r"\bar{g} \odot \begin{cases} 0 & $1 < $0 \\ \tfrac{1}{2} & $0 = $1 \\ 1 & \text{otherwise} \end{cases}"),
             broadcasts=None, jvp="pointwise")
MINIMUM = Op("minimum", "MinimumBackward0", r"$c = \min($0,\, $1)", lambda xp, a, b: xp.minimum(a, b),
             vjp=(lambda xp, g, c, a, b: xp.where(a > b, 0, xp.where(a == b, g * 0.5, g)),
                  lambda xp, g, c, a, b: xp.where(a < b, 0, xp.where(a == b, g * 0.5, g))), args=BINARY, saves=BINARY,
             vjp_latex=(r"\bar{g} \odot \begin{cases} 0 & $0 > $1 \\ \tfrac{1}{2} & $0 = $1 \\ 1 & \text{otherwise} \end{cases}", r"\bar{g} \odot \begin{cases} 0 & $1 > $0 \\ \tfrac{1}{2} & $0 = $1 \\ 1 & \text{otherwise} \end{cases}"),
             broadcasts=None, jvp="pointwise")

# rounded division: a step function, so its gradient is zero almost everywhere
DIV_ROUNDED = Op("div", "DivBackward2", r"$c = \operatorname{round}\left(\frac{$0}{$1}\right) \text{ (round: floor or trunc, the rounding mode)}",
                 # floor: torch's div_floor_floating (from fmod, as Python's //), which floor(a / b) is not where the
                 # quotient rounds up to an integer
                 quiet(lambda xp, a, b, mode: xp.floor_divide(a, b) if mode == "floor" else xp.trunc(a / b)),
                 vjp=(lambda xp, g, c, a, b, mode: xp.zeros_like(g), lambda xp, g, c, a, b, mode: xp.zeros_like(g)), args=BINARY, params=("rounding_mode",), saves=BINARY,
                 vjp_latex=(r"0", r"0",), jvp="pointwise")


def _floor_divide_vjp(xp, g, c, *args):
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


# PyTorch records `a // b` with a node that fails in backward: floor_divide has no derivative
FLOOR_DIVIDE = Op("floor_divide", "NotImplemented", r"$c = \left\lfloor \frac{$0}{$1} \right\rfloor",
                  quiet(lambda xp, a, b: xp.floor_divide(a, b)),
                  vjp=_floor_divide_vjp, args=BINARY,
                  vjp_latex=(r"\text{not implemented}",))
FLOOR_DIVIDE_SCALAR = Op("floor_divide", "NotImplemented", r"$c = \left\lfloor \frac{$0}{$other} \right\rfloor",
                         quiet(lambda xp, a, s: xp.floor_divide(a, s)), vjp=_floor_divide_vjp, params=("other",),
                         vjp_latex=(r"\text{not implemented}",))


def _quotient(xp, a, b):
    """⌊a / b⌋ as a constant (no graph): the slope of remainder in b."""
    if xp.arrays:
        return xp.floor_divide(a, b)
    with np.errstate(all="ignore"):
        return xp.constant(np.floor_divide(a._data, b._data))


REMAINDER = Op("remainder", "RemainderBackward1", r"$c = $0 \bmod $1", quiet(lambda xp, a, b: xp.remainder(a, b)),
               vjp=(lambda xp, g, c, a, b: g, quiet(lambda xp, g, c, a, b: -g * _quotient(xp, a, b))), args=BINARY, saves=BINARY,
               vjp_latex=(r"\bar{g}", r"-\bar{g} \odot \left\lfloor \frac{$0}{$1} \right\rfloor",),
               broadcasts=None, jvp="pointwise")
REMAINDER_SCALAR = Op("remainder", "RemainderBackward0", r"$c = $0 \bmod $other",
                      quiet(lambda xp, a, s: xp.remainder(a, s)),
                      vjp=(lambda xp, g, c, a, s: g,), params=("other",),
                      vjp_latex=(r"\bar{g}",), jvp="pointwise")
MASKED_FILL = Op("masked_fill", "MaskedFillBackward0",
                 r"$c = \begin{cases} $value & \mathrm{mask} \\ $0 & \text{otherwise} \end{cases}",
                 lambda xp, a, mask, v: contiguous(xp.where(mask, v, a).astype(a.dtype, copy=False)),
                 vjp=(lambda xp, g, c, a, mask, v: xp.where(mask, 0, g),),
                 params=("mask", "value"), saves=("mask",),
                 vjp_latex=(r"\bar{g} \odot \neg \mathrm{mask}",), jvp="pointwise")
MASKED_FILL_TENSOR = Op("masked_fill", "MaskedFillBackward1",
                        r"$c = \begin{cases} $1 & \mathrm{mask} \\ $0 & \text{otherwise} \end{cases}",
                        lambda xp, a, v, mask: xp.where(mask, v, a),
                        vjp=(lambda xp, g, c, a, v, mask: xp.where(mask, 0, g),
                             lambda xp, g, c, a, v, mask: xp.where(mask, g, 0)), args=("self", "value"), params=("mask",), symbols=("a", "v"),
                        saves=("mask",),
                        vjp_latex=(r"\bar{g} \odot \neg \mathrm{mask}", r"\sum \bar{g} \odot \mathrm{mask}",),
                        jvp="pointwise")

# comparisons and logic: no gradient (bool results)
def _nograd(name, latex, fn, **record):
    return Op(name, name, latex, fn, **record)


COMPARE = {name: _nograd(name, latex, fn) for name, (latex, fn) in {
    "eq": (r"$c = [$0 = $1]", lambda xp, a, b: a == b), "ne": (r"$c = [$0 \ne $1]", lambda xp, a, b: a != b),
    "lt": (r"$c = [$0 < $1]", lambda xp, a, b: a < b), "le": (r"$c = [$0 \le $1]", lambda xp, a, b: a <= b),
    "gt": (r"$c = [$0 > $1]", lambda xp, a, b: a > b), "ge": (r"$c = [$0 \ge $1]", lambda xp, a, b: a >= b),
    "bitwise_and": (r"$c = $0 \mathbin{\&} $1", lambda xp, a, b: a & b),
    "bitwise_or": (r"$c = $0 \mid $1", lambda xp, a, b: a | b),
    "bitwise_xor": (r"$c = $0 \oplus $1", lambda xp, a, b: a ^ b),
    # NumPy's shifts give what torch's give where C leaves it undefined: 0 for a left shift by a negative
    # amount or by the bit width or more, the sign bit (0 or -1) for such a right shift
    "bitwise_left_shift": (r"$c = $0 \ll $1", lambda xp, a, b: a << b),
    "bitwise_right_shift": (r"$c = $0 \gg $1", lambda xp, a, b: a >> b),
}.items()}
NOT = _nograd("logical_not", r"$c = \neg $0", lambda xp, a: ~a if a.dtype == bool else a == 0)
def _step_function(name: str, torch_name: str, latex: str, fn, **display) -> Op:
    """Rounding: piecewise constant, so PyTorch records a node whose gradient is zero."""
    return _unary(name, torch_name, latex, fn, lambda xp, g, c, a: xp.zeros_like(g), "0", saves=(), **display)


FLOOR = _step_function("floor", "FloorBackward0", r"$c = \lfloor $0 \rfloor",
                       lambda xp, a: xp.floor(a), jvp="pointwise")
ROUND = _step_function("round", "RoundBackward0", r"$c = \operatorname{round}($0)",
                       lambda xp, a: xp.round(a), jvp="pointwise")
ROUND_DECIMALS = Op("round", "RoundBackward1",
                    r"$c = \frac{\operatorname{round}($0 \cdot 10^{$decimals})}{10^{$decimals}}",
                    lambda xp, a, decimals: xp.round(a, decimals), vjp=(lambda xp, g, c, a, decimals: xp.zeros_like(g),),
                    vjp_latex=("0",), params=("decimals",))


# -- logs, exponentials, hyperbolic and inverse trig functions ---------
LN2, LN10 = math.log(2.0), math.log(10.0)


def via_double(fn):
    """fn of a float32 array computed in float64 and rounded once: NumPy's float32 log10 and log2 are a
    unit in the last place from the correctly rounded value for 40% and 6% of inputs, where torch's are
    off for 1 in 10,000 (so the log10 of a loss, printed by .item(), is torch's digit for digit)."""
    def wide(xp, a):
        if xp.arrays and a.dtype.kind == "f" and a.dtype.itemsize == 4:
            return fn(xp, a.astype(xp.float64)).astype(a.dtype)
        return fn(xp, a)
    return wide


LOG2 = _unary("log2", "Log2Backward0", r"$c = \log_2 $0", quiet(via_double(lambda xp, a: xp.log2(a))),
              quiet(lambda xp, g, c, a: g / (a * LN2)), r"\frac{\bar{g}}{$0 \ln 2}", jvp="pointwise")
LOG10 = _unary("log10", "Log10Backward0", r"$c = \log_{10} $0", quiet(half_in_float(via_double(lambda xp, a: xp.log10(a)))),
               quiet(lambda xp, g, c, a: g / (a * LN10)), r"\frac{\bar{g}}{$0 \ln 10}", jvp="pointwise")
EXP2 = _unary("exp2", "Exp2Backward0", r"$c = 2^{$0}", quiet(lambda xp, a: xp.exp2(a)), lambda xp, g, c, a: g * c * LN2,
              r"\bar{g} \odot $c \ln 2", saves=("result",), jvp="pointwise")
EXPM1 = _unary("expm1", "Expm1Backward0", r"$c = e^{$0} - 1", quiet(lambda xp, a: xp.expm1(a)),
               lambda xp, g, c, a: g * (c + 1), r"\bar{g} \odot ($c + 1)", saves=("result",), jvp="pointwise")
SINH = _unary("sinh", "SinhBackward0", r"$c = \sinh $0", quiet(lambda xp, a: xp.sinh(a)),
              quiet(lambda xp, g, c, a: g * xp.cosh(a)), r"\bar{g} \odot \cosh $0", jvp="pointwise")
COSH = _unary("cosh", "CoshBackward0", r"$c = \cosh $0", quiet(lambda xp, a: xp.cosh(a)),
              quiet(lambda xp, g, c, a: g * xp.sinh(a)), r"\bar{g} \odot \sinh $0", jvp="pointwise")
ASIN = _unary("asin", "AsinBackward0", r"$c = \arcsin $0", quiet(lambda xp, a: xp.arcsin(a)),
              quiet(lambda xp, g, c, a: g * (1 / xp.sqrt(fused_one_minus_square(xp, a))).astype(a.dtype)
                    if xp.arrays else g / xp.sqrt(1 - a * a)),
              r"\frac{\bar{g}}{\sqrt{1 - $0^2}}", jvp="pointwise")
ACOS = _unary("acos", "AcosBackward0", r"$c = \arccos $0", quiet(lambda xp, a: xp.arccos(a)),
              quiet(lambda xp, g, c, a: -g * (1 / xp.sqrt(fused_one_minus_square(xp, a))).astype(a.dtype)
                    if xp.arrays else -g / xp.sqrt(1 - a * a)),
              r"-\frac{\bar{g}}{\sqrt{1 - $0^2}}", jvp="pointwise")
ATAN = _unary("atan", "AtanBackward0", r"$c = \arctan $0", lambda xp, a: xp.arctan(a),
              lambda xp, g, c, a: g / (a * a + 1), r"\frac{\bar{g}}{1 + $0^2}", jvp="pointwise")


def _atan2_reciprocal(xp, a, b):
    """1/(a² + b²), with 0 where a² + b² is 0: PyTorch's atan2 gradient masks the origin (and an
    underflowed a² + b²), so atan2(0, 0) passes 0 back, not 0/0."""
    d = a * a + b * b
    return xp.where(d == 0, 0, 1 / d)


# PyTorch's order: ḡ·b·r and ḡ·(−a)·r with r the masked reciprocal (which gives its signed zeros)
ATAN2 = Op("atan2", "Atan2Backward0", r"$c = \text{atan2}($0,\, $1)", quiet(lambda xp, a, b: xp.arctan2(a, b)),
           vjp=(quiet(lambda xp, g, c, a, b: g * b * _atan2_reciprocal(xp, a, b)),
                quiet(lambda xp, g, c, a, b: g * -a * _atan2_reciprocal(xp, a, b))), args=BINARY, saves=BINARY,
           vjp_latex=(r"\frac{\bar{g} \odot $1}{$0^2 + $1^2}", r"-\frac{\bar{g} \odot $0}{$0^2 + $1^2}",),
           broadcasts=None, jvp="pointwise")
HYPOT = Op("hypot", "HypotBackward0", r"$c = \sqrt{$0^2 + $1^2}", lambda xp, a, b: xp.hypot(a, b),
           vjp=(quiet(lambda xp, g, c, a, b: g * a / c), quiet(lambda xp, g, c, a, b: g * b / c)), args=BINARY, saves=("self", "other", "result"),
           vjp_latex=(r"\frac{\bar{g} \odot $0}{$c}", r"\frac{\bar{g} \odot $1}{$c}",),
           broadcasts=None, jvp="pointwise")


def _lerp(xp, a, b, w):
    """lerp as torch's kernels compute it: a + w (b − a) for |w| < 0.5, else b − (1 − w)(b − a),
    each a fused multiply-add (one rounding), emulated in a wider type (exact for float32). A zero-dim
    weight of another dtype is read in the operands' dtype, as torch promotes it."""
    dtype = result_type((a, b, w)) if hasattr(w, "dtype") else xp.result_type(a, b, w)
    if dtype.kind != "f":
        return a + (b - a) * w
    op = np.dtype(np.float32) if dtype == np.float16 else dtype   # torch computes half in float
    wide = np.float64 if op == np.float32 else (np.longdouble if xp.xp is np else np.float64)
    a, b, w = a.astype(op, copy=False), b.astype(op, copy=False), xp.asarray(w, dtype=op)
    small = xp.abs(w) < 0.5
    coeff, base = xp.where(small, w, w - op.type(1)), xp.where(small, a, b)
    out = coeff.astype(wide) * (b - a).astype(wide) + base.astype(wide)
    return out.astype(op).astype(dtype, copy=False)


# lerp(a, b, w) = a + w (b − a): one node for a number w, another when w is a tensor (an input too)
LERP = Op("lerp", "LerpBackward0", r"$c = $0 + $weight\, ($1 - $0)", _lerp,
          vjp=(lambda xp, g, c, a, b, w: times(xp, g, 1 - w), lambda xp, g, c, a, b, w: times(xp, g, w)), args=("self", "end"), params=("weight",), symbols=("a", "b"),
          vjp_latex=(r"\bar{g}\, (1 - $weight)", r"\bar{g}\, $weight",),
          broadcasts=None, jvp="pointwise")
LERP_TENSOR = Op("lerp", "LerpBackward1", r"$c = $0 + $2 \odot ($1 - $0)", _lerp,
                 vjp=(lambda xp, g, c, a, b, w: g * (1 - w), lambda xp, g, c, a, b, w: g * w,
                      lambda xp, g, c, a, b, w: g * (b - a)), args=("self", "end", "weight"), symbols=("a", "b", "w"),
                 saves=("self", "end", "weight"),
                 vjp_latex=(r"\bar{g} \odot (1 - $2)", r"\bar{g} \odot $2", r"\bar{g} \odot ($1 - $0)",),
                 broadcasts=None, jvp="pointwise")
def _addcmul(xp, a, t1, t2, v):
    """a + v t₁ t₂: torch's float16 kernel computes fma(v t₁, t₂, a) in float32 (the compiler fuses its
    multiply and add) and rounds once to float16."""
    if xp.arrays and a.dtype is _HALF and t1.dtype is _HALF and t2.dtype is _HALF:
        return _addcmul_half(a, t1, t2, v)
    return a + t1 * t2 * v


@quiet
def _addcmul_half(a, t1, t2, v):
    scaled = t1.astype(_FLOAT) * np.float32(v)
    return (scaled.astype(np.float64) * t2 + a).astype(_FLOAT).astype(_HALF)   # the product is exact in float64


def _addcdiv(xp, a, t1, t2, v):
    """a + v t₁ / t₂: float16 in float32 (v read as float32), rounded once, as torch's kernel."""
    if xp.arrays and a.dtype is _HALF and t1.dtype is _HALF and t2.dtype is _HALF:
        return (a.astype(_FLOAT) + np.float32(v) * t1.astype(_FLOAT) / t2.astype(_FLOAT)).astype(_HALF)
    return a + t1 / t2 * v


ADDCMUL = Op("addcmul", "AddcmulBackward0", r"$c = $0 + $value\, $1 \odot $2", _addcmul,
             # torch: grad * (tensor2 * value), a mul by a number
             vjp=(lambda xp, g, c, a, t1, t2, v: g, lambda xp, g, c, a, t1, t2, v: g * times(xp, t2, v),
                  lambda xp, g, c, a, t1, t2, v: g * times(xp, t1, v)), args=("self", "tensor1", "tensor2"), params=("value",),
             symbols=("a", "t₁", "t₂"),
             saves=("tensor1", "tensor2"),
             vjp_latex=(r"\bar{g}", r"$value\, \bar{g} \odot $2", r"$value\, \bar{g} \odot $1",),
             broadcasts=None, jvp="pointwise")
ADDCDIV = Op("addcdiv", "AddcdivBackward0", r"$c = $0 + $value\, \frac{$1}{$2}",
             quiet(_addcdiv),
             # torch: grad * (value / tensor2), -grad * (value * tensor1 / (tensor2 * tensor2)); value / tensor2
             # fills value in tensor2's dtype and divides, value * tensor1 is a mul by a number
             vjp=(lambda xp, g, c, a, t1, t2, v: g, quiet(lambda xp, g, c, a, t1, t2, v: g * (v / t2)),
                  quiet(lambda xp, g, c, a, t1, t2, v: -g * (times(xp, t1, v) / (t2 * t2)))), args=("self", "tensor1", "tensor2"),
             symbols=("a", "t₁", "t₂"),
             params=("value",), saves=("tensor1", "tensor2"),
             vjp_latex=(r"\bar{g}", r"$value\, \frac{\bar{g}}{$2}", r"-$value\, \frac{\bar{g} \odot $1}{$2^2}",),
             broadcasts=None, jvp="pointwise")
# nan_to_num: the replaced entries are constants, so no gradient reaches them
NAN_TO_NUM = _unary("nan_to_num", "NanToNumBackward0", r"$c = $0 \text{ with nan and } \pm\infty \text{ replaced}",
                    lambda xp, a, nan, posinf, neginf: xp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf),
                    lambda xp, g, c, a, nan, posinf, neginf: xp.where(xp.isfinite(a), g, 0), r"\bar{g} \odot [$0 \text{ finite}]",
                    params=("nan", "posinf", "neginf"), jvp="pointwise")


def _logit_forward(xp, a, eps):
    if eps is not None:
        a = xp.clip(a, eps, 1 - eps)
    return xp.log(a / (1 - a))


def _logit_vjp(xp, g, c, a, eps):
    slope = g / (a * (1 - a))
    if eps is None:   # outside [0, 1] the derivative is nan, as in PyTorch
        return xp.where((a < 0) | (a > 1), a * float("nan"), slope)
    return xp.where((a < eps) | (a > 1 - eps), 0, slope)


LOGIT = _unary("logit", "LogitBackward0",
               r"$c = \log \frac{$0}{1 - $0} \text{ (with eps: } $0 \text{ clamped to } [\varepsilon,\, 1 - \varepsilon] \text{ first)}",
               quiet(_logit_forward), quiet(_logit_vjp),
               r"\frac{\bar{g}}{$0\, (1 - $0)} \text{ (with eps: 0 where } $0 \text{ was clamped)}",
               params=("eps",), jvp="pointwise")
# the sign of a real number: a step function, its gradient is zero
SGN = _unary("sgn", "SgnBackward0", r"$c = \operatorname{sgn} $0",
             lambda xp, a: xp.sign(a), lambda xp, g, c, a: xp.zeros_like(g), "0",
             saves=(), jvp="pointwise")
# fmod: the remainder with the sign of a (trunc division), as C's fmod
FMOD = Op("fmod", "FmodBackward1", r"$c = $0 - \operatorname{trunc}\left(\frac{$0}{$1}\right) $1",
          quiet(lambda xp, a, b: xp.fmod(a, b)),
          vjp=(lambda xp, g, c, a, b: g, quiet(lambda xp, g, c, a, b: -g * _trunc_quotient(xp, a, b))), args=BINARY, saves=BINARY,
          vjp_latex=(r"\bar{g}", r"-\bar{g} \odot \operatorname{trunc}\left(\frac{$0}{$1}\right)",),
          broadcasts=None, jvp="pointwise")
FMOD_SCALAR = Op("fmod", "FmodBackward0", r"$c = $0 - \operatorname{trunc}\left(\frac{$0}{$other}\right) $other",
                 quiet(lambda xp, a, s: xp.fmod(a, s)),
                 vjp=(lambda xp, g, c, a, s: g,), params=("other",),
                 vjp_latex=(r"\bar{g}",), jvp="pointwise")


def _trunc_quotient(xp, a, b):
    """trunc(a / b) as a constant (no graph): the slope of fmod in b."""
    if xp.arrays:
        return xp.trunc(a / b)
    with np.errstate(all="ignore"):
        return xp.constant(np.trunc(a._data / b._data))


CEIL = _step_function("ceil", "CeilBackward0", r"$c = \lceil $0 \rceil",
                      lambda xp, a: xp.ceil(a), jvp="pointwise")
TRUNC = _step_function("trunc", "TruncBackward0", r"$c = \operatorname{trunc}($0)",
                       lambda xp, a: xp.trunc(a), jvp="pointwise")
ISNAN = _nograd("isnan", r"$c = [$0 = \mathrm{nan}]", lambda xp, a: xp.isnan(a))
ISINF = _nograd("isinf", r"$c = [|$0| = \infty]", lambda xp, a: xp.isinf(a))
ISFINITE = _nograd("isfinite", r"$c = [|$0| < \infty]", lambda xp, a: xp.isfinite(a))


# -- the nodes a recorded VJP makes (create_graph=True), named as torch's -------------------------
# torch's backward formulas multiply by a Python number with the Scalar overload (MulBackward1)
# and compute some first derivatives as one op (tanh_backward, ...), so its second-order graph
# shows TanhBackwardBackward0. These ops are those first derivatives, with their own VJPs.
MUL_SCALAR = Op("mul", "MulBackward1", r"$c = $0 \cdot $other",
                times, vjp=(lambda xp, g, c, a, s: times(xp, g, s),), params=("other",), vjp_latex=(r"$other\, \bar{g}",), jvp="linear")
# ... and add or subtract one (AddBackward1, SubBackward1), as rms_norm's + eps and the losses' + margin do
ADD_SCALAR = Op("add", "AddBackward1", r"$c = $0 + $other",
                lambda xp, a, s: a + s, vjp=(lambda xp, g, c, a, s: g,), params=("other",), vjp_latex=(r"\bar{g}",))
SUB_SCALAR = Op("sub", "SubBackward1", r"$c = $0 - $other",
                lambda xp, a, s: a - s, vjp=(lambda xp, g, c, a, s: g,), params=("other",), vjp_latex=(r"\bar{g}",))
# ... and divide by one (DivBackward1), as cross_entropy's mean over class probabilities does
DIV_SCALAR = Op("div", "DivBackward1", r"$c = \frac{$0}{$other}", quiet(over),
                vjp=(quiet(lambda xp, g, c, a, s: over(xp, g, s)),), params=("other",), vjp_latex=(r"\frac{\bar{g}}{$other}",), jvp="linear")
# first derivatives as ops (what create_graph records): their input g is the gradient they were given,
# ḡ (as in every record) what they receive
TANH_BACKWARD = Op("tanh_backward", "TanhBackwardBackward0", r"$c = $0 \odot (1 - $1^2)", tanh_grad,
                   vjp=(lambda xp, gg, c, g, y: tanh_grad(xp, gg, y), lambda xp, gg, c, g, y: gg * g * y * -2), args=("grad_output", "output"),
                   saves=("grad_output", "output"), symbols=("g", "y"),
                   vjp_latex=(r"\bar{g} \odot (1 - $1^2)", r"-2\, \bar{g} \odot $0 \odot $1"), jvp="pointwise")
SIGMOID_BACKWARD = Op("sigmoid_backward", "SigmoidBackwardBackward0", r"$c = $0 \odot $1 \odot (1 - $1)",
                      lambda xp, g, y: g * (1 - y) * y,
                      vjp=(lambda xp, gg, c, g, y: gg * (1 - y) * y, lambda xp, gg, c, g, y: gg * g * (1 - y * 2)), args=("grad_output", "output"),
                      saves=("grad_output", "output"), symbols=("g", "y"),
                      vjp_latex=(r"\bar{g} \odot $1 \odot (1 - $1)", r"\bar{g} \odot $0 \odot (1 - 2 $1)"),
                      jvp="pointwise")
THRESHOLD_BACKWARD = Op("threshold_backward", "ThresholdBackwardBackward0", r"$c = $0 \odot [$1 > 0]",
                        lambda xp, g, y: xp.keep(g, y > 0),
                        vjp=(lambda xp, gg, c, g, y: xp.keep(gg, y > 0), lambda xp, gg, c, g, y: xp.zeros_like(gg)), args=("grad_output", "self"), saves=("self",),
                        symbols=("g", "y"),
                        vjp_latex=(r"\bar{g} \odot [$1 > 0]", r"0"), jvp="pointwise")
LEAKY_RELU_BACKWARD = Op("leaky_relu_backward", "LeakyReluBackwardBackward0",
                         r"$c = $0 \odot \begin{cases} 1 & $1 > 0 \\ $negative_slope & \text{otherwise} \end{cases}",
                         lambda xp, g, a, s: xp.where(a > 0, g, g * s),
                         vjp=(lambda xp, gg, c, g, a, s: xp.where(a > 0, gg, gg * s),
                              lambda xp, gg, c, g, a, s: xp.zeros_like(gg)), args=("grad_output", "self"),
                         params=("negative_slope",), saves=("self",), symbols=("g", "a"),
                         vjp_latex=(r"\bar{g} \odot \begin{cases} 1 & $1 > 0 \\ $negative_slope & \text{otherwise} \end{cases}",
                                    r"0"), jvp="pointwise")


# -- inverse hyperbolic and special functions, two-input ops, predicates --------------------------
def _special_fn(name: str):
    """The special function `name` on arrays (NumPy), or the public op on Tensors (create_graph=True),
    so a VJP that needs it records the node torch records (ḡ ⊙ ψ(a) makes a DigammaBackward0)."""
    def fn(xp, a, *args):
        if xp.arrays:
            return getattr(_special, name)(*args, a) if args else getattr(_special, name)(a)
        return getattr(xp, name)(*args, a)
    return fn


_digamma_of = _special_fn("digamma")
_polygamma_of = _special_fn("polygamma")
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

ACOSH = _unary("acosh", "AcoshBackward0", r"$c = \operatorname{arcosh} $0", quiet(lambda xp, a: xp.arccosh(a)),
               quiet(lambda xp, g, c, a: g / xp.sqrt(a * a - 1)), r"\frac{\bar{g}}{\sqrt{$0^2 - 1}}", jvp="pointwise")
ASINH = _unary("asinh", "AsinhBackward0", r"$c = \operatorname{arsinh} $0", quiet(lambda xp, a: xp.arcsinh(a)),
               quiet(lambda xp, g, c, a: g / xp.sqrt(a * a + 1)), r"\frac{\bar{g}}{\sqrt{$0^2 + 1}}",
               jvp="pointwise", expose=Exposure("asinh", "arcsinh", make="unary_float"))
ATANH = _unary("atanh", "AtanhBackward0", r"$c = \operatorname{artanh} $0", quiet(lambda xp, a: xp.arctanh(a)),
               quiet(lambda xp, g, c, a: g / (1 - a * a)), r"\frac{\bar{g}}{1 - $0^2}",
               jvp="pointwise", expose=Exposure("atanh", "arctanh", make="unary_float"))
ERFC = _unary("erfc", "ErfcBackward0", r"$c = \operatorname{erfc} $0 = 1 - \operatorname{erf} $0",
              half_in_float(lambda xp, a: _special.erfc(a).astype(a.dtype, copy=False)),
              lambda xp, g, c, a: g * xp.exp(-(a * a)) * -TWO_OVER_SQRT_PI, r"-\bar{g} \odot \frac{2}{\sqrt{\pi}} e^{-$0^2}",
              jvp="pointwise", expose=Exposure("erfc", make="unary_float"))
# torch saves the input and recomputes erfinv in its backward; the slope is √π/2 e^(c²) either way
ERFINV = _unary("erfinv", "ErfinvBackward0", r"$c = \operatorname{erf}^{-1} $0",
                half_in_float(lambda xp, a: _special.erfinv(a).astype(a.dtype, copy=False)),
                quiet(lambda xp, g, c, a: g * xp.exp(c * c) * (math.sqrt(math.pi) / 2)), r"\bar{g} \odot \frac{\sqrt{\pi}}{2} e^{$c^2}",
                saves=("self", "result"),
                jvp="pointwise", expose=Exposure("erfinv", make="unary_float"))
LGAMMA = _unary("lgamma", "LgammaBackward0", r"$c = \log \left|\Gamma($0)\right|",
                lambda xp, a: _special.lgamma(a).astype(a.dtype, copy=False),
                lambda xp, g, c, a: g * _digamma_of(xp, a), r"\bar{g} \odot \psi($0)",
                jvp="pointwise", expose=Exposure("lgamma", make="unary_float"))
DIGAMMA = _unary("digamma", "DigammaBackward0", r"$c = \psi($0) = \frac{\Gamma'($0)}{\Gamma($0)}",
                 lambda xp, a: _special.digamma(a).astype(a.dtype, copy=False),
                 lambda xp, g, c, a: g * _polygamma_of(xp, a, 1), r"\bar{g} \odot \psi^{(1)}($0)",
                 jvp="pointwise", expose=Exposure("digamma", make="unary_float"))
POLYGAMMA = _unary("polygamma", "PolygammaBackward0", r"$c = \psi^{($n)}($0)",
                   lambda xp, a, n: _special.polygamma(n, a).astype(a.dtype, copy=False),
                   lambda xp, g, c, a, n: g * _polygamma_of(xp, a, n + 1), r"\bar{g} \odot \psi^{($n + 1)}($0)", params=("n",), jvp="pointwise")


def _mvlgamma_forward(xp, a, p):
    out = _special.lgamma(a[..., None] - xp.arange(p) / 2).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    return out.astype(a.dtype, copy=False)


def _mvlgamma_vjp(xp, g, c, a, p):
    if xp.arrays:
        return g * _special.digamma(a[..., None] - xp.arange(p) / 2).sum(-1)
    return g * sum(xp.digamma(a - j / 2) for j in range(p))


MVLGAMMA = _unary("mvlgamma", "MvlgammaBackward0", r"$c = \frac{$p($p - 1)}{4} \log \pi + "
                        r"\sum_{j=0}^{$p - 1} \log \Gamma\left($0 - \tfrac{j}{2}\right)", _mvlgamma_forward,
                  _mvlgamma_vjp, r"\bar{g} \odot \sum_{j=0}^{$p - 1} \psi\left($0 - \tfrac{j}{2}\right)", params=("p",), jvp="pointwise")
DEG2RAD = _unary("deg2rad", "Deg2RadBackward0", r"$c = $0 \cdot \frac{\pi}{180}", lambda xp, a: a * (math.pi / 180),
                 lambda xp, g, c, a: g * (math.pi / 180), r"\bar{g}\, \frac{\pi}{180}", saves=(),
                 jvp="linear", expose=Exposure("deg2rad", make="unary_float"))
RAD2DEG = _unary("rad2deg", "Rad2DegBackward0", r"$c = $0 \cdot \frac{180}{\pi}", lambda xp, a: a * (180 / math.pi),
                 lambda xp, g, c, a: g * (180 / math.pi), r"\bar{g}\, \frac{180}{\pi}", saves=(),
                 jvp="linear", expose=Exposure("rad2deg", make="unary_float"))
FRAC = _unary("frac", "FracBackward0", r"$c = $0 - \operatorname{trunc}($0)",
              lambda xp, a: a - xp.trunc(a), lambda xp, g, c, a: g, r"\bar{g}",
              saves=(), jvp="pointwise")


def _sinc_forward(xp, a):
    pa = a * math.pi
    return xp.where(a == 0, 1.0, xp.sin(pa) / xp.where(a == 0, 1.0, pa)).astype(a.dtype, copy=False)


def _sinc_vjp(xp, g, c, a):
    pa = a * math.pi
    slope = (pa * xp.cos(pa) - xp.sin(pa)) / (pa * a)
    return g * xp.where(a == 0, 0.0, slope)


SINC = _unary("sinc", "SincBackward0", r"$c = \frac{\sin(\pi $0)}{\pi $0}", quiet(half_in_float(_sinc_forward)), quiet(_sinc_vjp),
              r"\bar{g} \odot \frac{\pi $0 \cos(\pi $0) - \sin(\pi $0)}{\pi $0^2}",
              jvp="pointwise", expose=Exposure("sinc", make="unary_float"))
CLAMP_MAX = _unary("clamp_max", "ClampMaxBackward0", r"$c = \min($0,\, $max)", lambda xp, a, hi: xp.minimum(a, hi),
                   lambda xp, g, c, a, hi: xp.keep(g, a <= hi), r"\bar{g} \odot [$0 \le $max]", params=("max",), jvp="pointwise")
CLAMP_MIN = _unary("clamp_min", "ClampMinBackward0", r"$c = \max($0,\, $min)", lambda xp, a, lo: xp.maximum(a, lo),
                   lambda xp, g, c, a, lo: xp.keep(g, a >= lo), r"\bar{g} \odot [$0 \ge $min]", params=("min",), jvp="pointwise")
CLAMP_MAX_TENSOR = Op("clamp_max", "ClampMaxBackward1", r"$c = \min($0,\, $1)", lambda xp, a, hi: xp.minimum(a, hi),
                      vjp=(lambda xp, g, c, a, hi: xp.keep(g, a <= hi), lambda xp, g, c, a, hi: xp.keep(g, a > hi)), args=("self", "max"), saves=("self", "max"),
                      symbols=("a", "hi"), broadcasts=None,
                      vjp_latex=(r"\bar{g} \odot [$0 \le $1]", r"\bar{g} \odot [$0 > $1]"), jvp="pointwise")
CLAMP_MIN_TENSOR = Op("clamp_min", "ClampMinBackward1", r"$c = \max($0,\, $1)", lambda xp, a, lo: xp.maximum(a, lo),
                      vjp=(lambda xp, g, c, a, lo: xp.keep(g, a >= lo), lambda xp, g, c, a, lo: xp.keep(g, a < lo)), args=("self", "min"), saves=("self", "min"),
                      symbols=("a", "lo"), broadcasts=None,
                      vjp_latex=(r"\bar{g} \odot [$0 \ge $1]", r"\bar{g} \odot [$0 < $1]"), jvp="pointwise")


def _xlogy_forward(xp, a, b):
    return xp.where(b != b, b, xp.where(a == 0, 0.0, a * xp.log(b))).astype(np.result_type(a, b), copy=False)


def _xlogy_other_vjp(xp, g, c, a, s):
    """torch: xlogy(ḡ, other), masked to 0 where a = 0 for other ≤ 0; xlogy's kernel reads other in ḡ's
    dtype (float16's log rounded to float16, then the product rounded)."""
    if xp.arrays and g.dtype.kind == "f":
        s = g.dtype.type(s)
        log = xp.log(s.astype(_FLOAT)).astype(_HALF) if g.dtype is _HALF else xp.log(s)
        out = xp.where(g == 0, g * 0, g * log)
    else:
        out = g * _log_or_nan(s)
    return out if s > 0 else xp.where(a == 0, 0, out)


def _xlogy_self(xp, g, c, a, b):   # torch: ḡ ⊙ xlogy(a ≠ 0, b)
    return g * xp.where(b != b, b, xp.where(a == 0, 0.0, xp.log(b)))


XLOGY = Op("xlogy", "XlogyBackward0", r"$c = $0 \log $1", quiet(_xlogy_forward),
           vjp=(quiet(_xlogy_self), quiet(lambda xp, g, c, a, b: g * a / b)), args=BINARY, saves=BINARY, vjp_latex=(r"\bar{g} \odot \log $1", r"\frac{\bar{g} \odot $0}{$1}"),
           broadcasts=None, jvp="pointwise")
XLOGY_SCALAR_SELF = Op("xlogy", "XlogyBackward1", r"$c = $self \log $0",
                       quiet(lambda xp, b, s: _xlogy_forward(xp, xp.asarray(s, b.dtype), b)),
                       vjp=(quiet(lambda xp, g, c, b, s: times(xp, g, s) / b),), args=("other",),
                       params=("self",), saves=("other",), symbols=("b",), vjp_latex=(r"\frac{$self\, \bar{g}}{$0}",), jvp="pointwise")
XLOGY_SCALAR_OTHER = Op("xlogy", "XlogyBackward2", r"$c = $0 \log $other",
                        quiet(lambda xp, a, s: _xlogy_forward(xp, a, xp.asarray(s, a.dtype))),
                        vjp=(quiet(_xlogy_other_vjp),), params=("other",), vjp_latex=(r"\bar{g} \log $other",), jvp="pointwise")


def _log_or_nan(s: float) -> float:
    return math.log(s) if s > 0 else (-math.inf if s == 0 else math.nan)


def _logaddexp_forward(base_log1p_exp):
    def forward(xp, a, b):
        out = xp.maximum(a, b) + base_log1p_exp(xp, -xp.abs(a - b))
        return xp.where(xp.isinf(a) & (a == b), a, out)
    return quiet(forward)


LOGADDEXP = Op("logaddexp", "LogaddexpBackward0", r"$c = \log\left(e^{$0} + e^{$1}\right)",
               _logaddexp_forward(lambda xp, d: xp.log1p(xp.exp(d))),
               vjp=(quiet(lambda xp, g, c, a, b: g / (xp.exp(b - a) + 1)),
                    quiet(lambda xp, g, c, a, b: g / (xp.exp(a - b) + 1))), args=BINARY, saves=BINARY, broadcasts=None,
               vjp_latex=(r"\frac{\bar{g}}{1 + e^{$1 - $0}}", r"\frac{\bar{g}}{1 + e^{$0 - $1}}"), jvp="pointwise")
LOGADDEXP2 = Op("logaddexp2", "Logaddexp2Backward0", r"$c = \log_2\left(2^{$0} + 2^{$1}\right)",
                _logaddexp_forward(lambda xp, d: xp.log1p(xp.exp(d * LN2)) / LN2),
                vjp=(quiet(lambda xp, g, c, a, b: g / (xp.exp((b - a) * LN2) + 1)),
                     quiet(lambda xp, g, c, a, b: g / (xp.exp((a - b) * LN2) + 1))), args=BINARY, saves=BINARY, broadcasts=None,
                vjp_latex=(r"\frac{\bar{g}}{1 + 2^{$1 - $0}}", r"\frac{\bar{g}}{1 + 2^{$0 - $1}}"), jvp="pointwise")


def _copysign_self(xp, g, c, a, *_):   # torch: ḡ ⊙ c / a, 0 where a = 0
    return g * xp.where(a == 0, 0.0, c / xp.where(a == 0, 1.0, a))


COPYSIGN = Op("copysign", "CopysignBackward0", r"$c = |$0| \operatorname{sign} $1", lambda xp, a, b: xp.copysign(a, b),
              vjp=(quiet(_copysign_self), lambda xp, g, c, a, b: xp.zeros_like(g)), args=BINARY, saves=("self", "result"), vjp_latex=(r"\bar{g} \odot \frac{$c}{$0}", r"0"),
              broadcasts=None, jvp="pointwise")
COPYSIGN_SCALAR = Op("copysign", "CopysignBackward1", r"$c = |$0| \operatorname{sign}($other)",
                     lambda xp, a, s: xp.copysign(a, s),
                     vjp=(quiet(_copysign_self),), params=("other",),
                     saves=("self", "result"), vjp_latex=(r"\bar{g} \odot \frac{$c}{$0}",),
                     jvp="pointwise")
# fmax/fmin ignore a NaN operand; unlike maximum, ties send ḡ to the first input only
FMAX = Op("fmax", "FmaxBackward0", r"$c = \operatorname{fmax}($0,\, $1)", lambda xp, a, b: xp.fmax(a, b),
          vjp=(lambda xp, g, c, a, b: xp.keep(g, (a >= b) | (b != b)),
               lambda xp, g, c, a, b: xp.keep(g, ~((a >= b) | (b != b)))), args=BINARY, saves=BINARY,
          vjp_latex=(r"\bar{g} \odot [$0 \ge $1 \lor $1 = \mathrm{nan}]",
                     r"\bar{g} \odot [$0 < $1 \lor $0 = \mathrm{nan}]"),
          broadcasts=None, jvp="pointwise")
FMIN = Op("fmin", "FminBackward0", r"$c = \operatorname{fmin}($0,\, $1)", lambda xp, a, b: xp.fmin(a, b),
          vjp=(lambda xp, g, c, a, b: xp.keep(g, (a <= b) | (b != b)),
               lambda xp, g, c, a, b: xp.keep(g, ~((a <= b) | (b != b)))), args=BINARY, saves=BINARY,
          vjp_latex=(r"\bar{g} \odot [$0 \le $1 \lor $1 = \mathrm{nan}]",
                     r"\bar{g} \odot [$0 > $1 \lor $0 = \mathrm{nan}]"),
          broadcasts=None, jvp="pointwise")
LDEXP = Op("ldexp", "LdexpBackward0", r"$c = $0 \cdot 2^{$1}", quiet(lambda xp, a, b: a * xp.exp2(b)),
           vjp=(quiet(lambda xp, g, c, a, b: g * xp.exp2(b)), quiet(lambda xp, g, c, a, b: g * c * LN2)), args=BINARY, saves=("other", "result"), broadcasts=None, vjp_latex=(r"\bar{g} \odot 2^{$1}", r"\bar{g} \odot $c \ln 2"),
           jvp="pointwise")


def _heaviside_vjp(xp, g, c, *args):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


# PyTorch records heaviside with a node that fails in backward, as floor_divide
HEAVISIDE = Op("heaviside", "NotImplemented", r"$c = \begin{cases} 1 & $0 > 0 \\ $1 & $0 = 0 \\ 0 & $0 < 0 \end{cases}",
               lambda xp, a, b: xp.where(a == 0, b, (a > 0).astype(np.result_type(a, b))),
               vjp=_heaviside_vjp, args=("self", "values"),
               vjp_latex=(r"\text{not implemented}", r"\text{not implemented}"))
LOGIC = {name: _nograd(name, latex, fn) for name, (latex, fn) in {
    "logical_and": (r"$c = [$0 \ne 0] \land [$1 \ne 0]", lambda xp, a, b: (a != 0) & (b != 0)),
    "logical_or": (r"$c = [$0 \ne 0] \lor [$1 \ne 0]", lambda xp, a, b: (a != 0) | (b != 0)),
    "logical_xor": (r"$c = [$0 \ne 0] \oplus [$1 \ne 0]", lambda xp, a, b: (a != 0) ^ (b != 0)),
}.items()}
SIGNBIT = _nograd("signbit", r"$c = [\text{the sign bit of } $0 \text{ is set}]", lambda xp, a: xp.signbit(a),
                  expose=Exposure("signbit", make="unary"))
ISPOSINF = _nograd("isposinf", r"$c = [$0 = \infty]",
                   lambda xp, a: xp.isposinf(a) if a.dtype.kind == "f" else xp.zeros(a.shape, bool))
ISNEGINF = _nograd("isneginf", r"$c = [$0 = -\infty]",
                   lambda xp, a: xp.isneginf(a) if a.dtype.kind == "f" else xp.zeros(a.shape, bool))
ISREAL = _nograd("isreal", r"$c = [\operatorname{Im} $0 = 0]",
                 lambda xp, a: xp.imag(a) == 0 if a.dtype.kind == "c" else xp.ones(a.shape, bool),
                 expose=Exposure("isreal", make="unary"))
BITWISE_NOT = _nograd("bitwise_not", r"$c = \sim $0", lambda xp, a: ~a)
GCD = _nograd("gcd", r"$c = \gcd($0,\, $1)", lambda xp, a, b: xp.gcd(a, b))
LCM = _nograd("lcm", r"$c = \operatorname{lcm}($0,\, $1)", lambda xp, a, b: xp.lcm(a, b))


def _frexp_vjp(xp, g, c, a, exponent):
    """torch's grad / exponent.exp2(): the int32 exponent's exp2 is a tensor of the default dtype when
    the backward runs (in float32, an exponent past 127 makes the gradient 0)."""
    scale = 2.0 ** exponent.astype(get_default_dtype().np)
    return g / (scale if xp.arrays else xp.constant(scale))


# the mantissa of a = m · 2ᵉ, ½ ≤ |m| < 1 (the function finds the int32 exponent e, which has no gradient)
FREXP = Op("frexp", "FrexpBackward0", r"$c = $0 \cdot 2^{-e}", lambda xp, a, exponent: xp.frexp(a)[0],
           vjp=(_frexp_vjp,), params=("exponent",), saves=("exponent",), vjp_latex=(r"\bar{g} \cdot 2^{-e}",))
