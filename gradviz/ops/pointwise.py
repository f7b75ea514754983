"""Elementwise ops: a table of derivatives. Each VJP returns the gradient in the
broadcast shape; the engine sums it back to the input's shape."""
from __future__ import annotations

import math

import numpy as np

from .core import apply, coerce_pair
from .op import Op

SQRT_2, SQRT_2PI = math.sqrt(2.0), math.sqrt(2.0 * math.pi)


def quiet(fn):
    """Run `fn` with NumPy's floating-point warnings off: PyTorch returns inf/nan silently."""
    def run(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return run


BINARY = ("self", "other")

ADD = Op("add", "AddBackward0", "c = a + b", lambda xp, a, b: a + b,
         vjp=(lambda xp, g, c, a, b: g, lambda xp, g, c, a, b: g), vjp_formulas=("ḡ", "ḡ"), args=BINARY)
SUB = Op("sub", "SubBackward0", "c = a − b", lambda xp, a, b: a - b,
         vjp=(lambda xp, g, c, a, b: g, lambda xp, g, c, a, b: -g), vjp_formulas=("ḡ", "−ḡ"), args=BINARY)
RSUB = Op("rsub", "RsubBackward1", "c = b − a", lambda xp, a, b: b - a,
          vjp=(lambda xp, g, c, a, b: -g, lambda xp, g, c, a, b: g), vjp_formulas=("−ḡ", "ḡ"), args=BINARY)
MUL = Op("mul", "MulBackward0", "c = a ⊙ b", lambda xp, a, b: a * b,
         vjp=(lambda xp, g, c, a, b: g * b, lambda xp, g, c, a, b: g * a),
         vjp_formulas=("ḡ ⊙ b", "ḡ ⊙ a"), args=BINARY, saves=BINARY)
DIV = Op("div", "DivBackward0", "c = a / b", quiet(lambda xp, a, b: a / b),
         vjp=(quiet(lambda xp, g, c, a, b: g / b), quiet(lambda xp, g, c, a, b: -g * a / (b * b))),
         vjp_formulas=("ḡ / b", "−ḡ ⊙ a / b²"), args=BINARY, saves=BINARY)
POW = Op("pow", "PowBackward1", "c = aᵇ", quiet(lambda xp, a, b: a ** b),
         vjp=(quiet(lambda xp, g, c, a, b: xp.where(b == 0, 0, g * b * a ** (b - 1))),
              quiet(lambda xp, g, c, a, b: xp.where((a == 0) & (b >= 0), 0, g * c * xp.log(a)))),
         vjp_formulas=("ḡ ⊙ b ⊙ aᵇ⁻¹", "ḡ ⊙ c ⊙ log a"), args=("self", "exponent"), saves=("self", "exponent", "result"))
POW_SCALAR = Op("pow", "PowBackward0", "c = aᵖ", quiet(lambda xp, a, p: a ** p),
                vjp=(quiet(lambda xp, g, c, a, p: xp.zeros_like(g) if p == 0 else g * p * a ** (p - 1)),),
                vjp_formulas=("ḡ ⊙ p ⊙ aᵖ⁻¹",), params=("exponent",), saves=("self",))
RPOW_SCALAR = Op("pow", "PowBackward2", "c = sᵃ", quiet(lambda xp, a, s: s ** a),
                 vjp=(quiet(lambda xp, g, c, a, s: g * c * math.log(s) if s > 0 else xp.where(a >= 0, 0, g * c * math.log(s))),),
                 vjp_formulas=("ḡ ⊙ c ⊙ log s",), args=("exponent",), params=("self",), saves=("result",))


def _unary(name, torch_name, formula, forward, vjp, vjp_formula, saves=("self",), params=()):
    return Op(name, torch_name, formula, forward, vjp=(vjp,), vjp_formulas=(vjp_formula,),
              params=params, saves=saves)


NEG = _unary("neg", "NegBackward0", "c = −a", lambda xp, a: -a, lambda xp, g, c, a: -g, "−ḡ", saves=())
EXP = _unary("exp", "ExpBackward0", "c = eᵃ", quiet(lambda xp, a: xp.exp(a)), lambda xp, g, c, a: g * c,
             "ḡ ⊙ c", saves=("result",))
LOG = _unary("log", "LogBackward0", "c = log a", quiet(lambda xp, a: xp.log(a)), quiet(lambda xp, g, c, a: g / a),
             "ḡ / a")
LOG1P = _unary("log1p", "Log1PBackward0", "c = log(1 + a)", quiet(lambda xp, a: xp.log1p(a)),
               quiet(lambda xp, g, c, a: g / (a + 1)), "ḡ / (1 + a)")
SQRT = _unary("sqrt", "SqrtBackward0", "c = √a", quiet(lambda xp, a: xp.sqrt(a)),
              quiet(lambda xp, g, c, a: g / (c * 2)), "ḡ / (2c)", saves=("result",))
RSQRT = _unary("rsqrt", "RsqrtBackward0", "c = 1/√a", quiet(lambda xp, a: 1 / xp.sqrt(a)),
               lambda xp, g, c, a: g * c * c * c * -0.5, "−ḡ ⊙ c³ / 2", saves=("result",))
RECIPROCAL = _unary("reciprocal", "ReciprocalBackward0", "c = 1/a", quiet(lambda xp, a: 1 / a),
                    lambda xp, g, c, a: -g * c * c, "−ḡ ⊙ c²", saves=("result",))
SIN = _unary("sin", "SinBackward0", "c = sin a", lambda xp, a: xp.sin(a), lambda xp, g, c, a: g * xp.cos(a),
             "ḡ ⊙ cos a")
COS = _unary("cos", "CosBackward0", "c = cos a", lambda xp, a: xp.cos(a), lambda xp, g, c, a: -g * xp.sin(a),
             "−ḡ ⊙ sin a")
TAN = _unary("tan", "TanBackward0", "c = tan a", lambda xp, a: xp.tan(a), lambda xp, g, c, a: g * (c * c + 1),
             "ḡ ⊙ (1 + c²)", saves=("result",))
TANH = _unary("tanh", "TanhBackward0", "c = tanh a", lambda xp, a: xp.tanh(a),
              lambda xp, g, c, a: g * (1 - c * c), "ḡ ⊙ (1 − c²)", saves=("result",))
SIGMOID = _unary("sigmoid", "SigmoidBackward0", "c = σ(a)", quiet(lambda xp, a: 1 / (1 + xp.exp(-a))),
                 lambda xp, g, c, a: g * c * (1 - c), "ḡ ⊙ c ⊙ (1 − c)", saves=("result",))
RELU = _unary("relu", "ReluBackward0", "c = max(a, 0)", lambda xp, a: xp.maximum(a, 0),
              lambda xp, g, c, a: xp.keep(g, c > 0), "ḡ ⊙ [c > 0]", saves=("result",))
LEAKY_RELU = _unary("leaky_relu", "LeakyReluBackward0", "c = a if a > 0 else s·a",
                    lambda xp, a, s: xp.where(a > 0, a, a * s),
                    lambda xp, g, c, a, s: xp.where(a > 0, g, g * s), "ḡ ⊙ (a > 0 ? 1 : s)", params=("negative_slope",))
ERF = _unary("erf", "ErfBackward0", "c = erf a", lambda xp, a: xp.erf(a),
             lambda xp, g, c, a: g * xp.exp(-(a * a)) * (2 / math.sqrt(math.pi)), "ḡ ⊙ 2/√π e^(−a²)")
GELU = _unary("gelu", "GeluBackward0", "c = a Φ(a)", lambda xp, a: a * (xp.erf(a / SQRT_2) + 1) * 0.5,
              lambda xp, g, c, a: g * ((xp.erf(a / SQRT_2) + 1) * 0.5 + a * xp.exp(a * a * -0.5) / SQRT_2PI),
              "ḡ ⊙ (Φ(a) + a φ(a))")
GELU_TANH = _unary("gelu", "GeluBackward0", "c = a Φ̃(a) (tanh)",
                   lambda xp, a: a * 0.5 * (1 + xp.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a * a * a))),
                   lambda xp, g, c, a: g * _gelu_tanh_grad(xp, a), "ḡ ⊙ Φ̃′(a)")


def _gelu_tanh_grad(xp, a):
    k = math.sqrt(2 / math.pi)
    t = xp.tanh(k * (a + 0.044715 * a * a * a))
    return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * k * (1 + 3 * 0.044715 * a * a)


SOFTPLUS = _unary("softplus", "SoftplusBackward0", "c = log(1 + e^(βa))/β",
                  quiet(lambda xp, a, beta, threshold: xp.where(a * beta > threshold, a, xp.log1p(xp.exp(a * beta)) / beta)),
                  quiet(lambda xp, g, c, a, beta, threshold: xp.where(a * beta > threshold, g, g / (1 + xp.exp(-(a * beta))))),
                  "ḡ ⊙ σ(βa)", params=("beta", "threshold"))
ABS = _unary("abs", "AbsBackward0", "c = |a|", lambda xp, a: xp.abs(a), lambda xp, g, c, a: g * xp.sign(a),
             "ḡ ⊙ sign a")
SIGN = _unary("sign", "SignBackward0", "c = sign a", lambda xp, a: xp.sign(a), lambda xp, g, c, a: xp.zeros_like(g), "0",
              saves=())
CLAMP = _unary("clamp", "ClampBackward1", "c = clamp(a, lo, hi)", lambda xp, a, lo, hi: xp.clip(a, lo, hi),
               lambda xp, g, c, a, lo, hi: xp.keep(g, _in_range(a, lo, hi)), "ḡ ⊙ [lo ≤ a ≤ hi]",
               params=("min", "max"))


def _in_range(a, lo, hi):
    mask = a == a
    if lo is not None:
        mask = mask & (a >= lo)
    if hi is not None:
        mask = mask & (a <= hi)
    return mask


WHERE = Op("where", "WhereBackward0", "c = cond ? a : b", lambda xp, a, b, cond: xp.where(cond, a, b),
           vjp=(lambda xp, g, c, a, b, cond: xp.where(cond, g, 0),
                lambda xp, g, c, a, b, cond: xp.where(cond, 0, g)),
           vjp_formulas=("ḡ ⊙ cond", "ḡ ⊙ ¬cond"), args=BINARY, params=("condition",), saves=("condition",))
# ties split the gradient evenly, as PyTorch does
MAXIMUM = Op("maximum", "MaximumBackward0", "c = max(a, b)", lambda xp, a, b: xp.maximum(a, b),
             vjp=(lambda xp, g, c, a, b: xp.where(a > b, g, xp.where(a == b, g * 0.5, 0)),
                  lambda xp, g, c, a, b: xp.where(b > a, g, xp.where(a == b, g * 0.5, 0))),
             vjp_formulas=("ḡ ⊙ [a > b]", "ḡ ⊙ [b > a]"), args=BINARY, saves=BINARY)
MINIMUM = Op("minimum", "MinimumBackward0", "c = min(a, b)", lambda xp, a, b: xp.minimum(a, b),
             vjp=(lambda xp, g, c, a, b: xp.where(a < b, g, xp.where(a == b, g * 0.5, 0)),
                  lambda xp, g, c, a, b: xp.where(b < a, g, xp.where(a == b, g * 0.5, 0))),
             vjp_formulas=("ḡ ⊙ [a < b]", "ḡ ⊙ [b < a]"), args=BINARY, saves=BINARY)

# comparisons and logic: no gradient (bool results)
def _nograd(name, fn):
    return Op(name, name, name, fn)


COMPARE = {name: _nograd(name, fn) for name, fn in {
    "eq": lambda xp, a, b: a == b, "ne": lambda xp, a, b: a != b, "lt": lambda xp, a, b: a < b,
    "le": lambda xp, a, b: a <= b, "gt": lambda xp, a, b: a > b, "ge": lambda xp, a, b: a >= b,
    "logical_and": lambda xp, a, b: a & b, "logical_or": lambda xp, a, b: a | b,
    "logical_xor": lambda xp, a, b: a ^ b,
}.items()}
NOT = _nograd("logical_not", lambda xp, a: ~a if a.dtype == bool else a == 0)
FLOOR = _nograd("floor", lambda xp, a: xp.floor(a))
ROUND = _nograd("round", lambda xp, a: xp.round(a))


# -- public functions ---------------------------------------------------------------
def binary(op: Op, a, b):
    a, b, dtype = coerce_pair(a, b)
    return apply(op, (a, b), (), dtype)


def add(input, other, *, alpha=1):
    return binary(ADD, input, other if alpha == 1 else other * alpha)


def sub(input, other, *, alpha=1):
    return binary(SUB, input, other if alpha == 1 else other * alpha)


def mul(input, other):
    return binary(MUL, input, other)


def div(input, other, *, rounding_mode=None):
    a, b, dtype = coerce_pair(input, other)
    if rounding_mode is not None:
        out = a._data / b._data
        out = np.floor(out) if rounding_mode == "floor" else np.trunc(out)
        from ..tensor import Tensor
        return Tensor._make(out.astype(dtype or a._data.dtype, copy=False))
    if dtype is None and a._data.dtype.kind in "biu" and b._data.dtype.kind in "biu":
        from ..dtypes import get_default_dtype
        dtype = get_default_dtype().np   # true division of integers gives the default float dtype
    return apply(DIV, (a, b), (), dtype)


def rsub(input, other):
    return binary(RSUB, input, other)


def pow(input, exponent):
    from ..tensor import Tensor
    if not isinstance(input, Tensor):
        return apply(RPOW_SCALAR, (exponent,), (input,))
    if isinstance(exponent, Tensor):
        return binary(POW, input, exponent)
    if input._data.dtype.kind in "biu" and isinstance(exponent, float):
        input = input.float()
    return apply(POW_SCALAR, (input,), (exponent,))


def where(condition, input, other):
    from ..tensor import Tensor
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    a, b, dtype = coerce_pair(input, other)
    return apply(WHERE, (a, b), (cond,), dtype)


def maximum(input, other):
    return binary(MAXIMUM, input, other)


def minimum(input, other):
    return binary(MINIMUM, input, other)


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return apply(CLAMP, (input,), (min, max))


def leaky_relu(input, negative_slope=0.01):
    return apply(LEAKY_RELU, (input,), (negative_slope,))


def gelu(input, approximate="none"):
    return apply(GELU_TANH if approximate == "tanh" else GELU, (input,))


def softplus(input, beta=1.0, threshold=20.0):
    return apply(SOFTPLUS, (input,), (beta, threshold))


def _make_unary(op):
    def fn(input):
        return apply(op, (input,))
    fn.__name__ = op.name
    fn.__doc__ = f"{op.formula}  (grad_fn {op.torch_name}; VJP {op.vjp_formulas[0] if op.vjp_formulas else '-'})"
    return fn


neg = _make_unary(NEG)
exp = _make_unary(EXP)
log = _make_unary(LOG)
log1p = _make_unary(LOG1P)
sqrt = _make_unary(SQRT)
rsqrt = _make_unary(RSQRT)
reciprocal = _make_unary(RECIPROCAL)
sin = _make_unary(SIN)
cos = _make_unary(COS)
tan = _make_unary(TAN)
tanh = _make_unary(TANH)
sigmoid = _make_unary(SIGMOID)
relu = _make_unary(RELU)
erf = _make_unary(ERF)
abs = _make_unary(ABS)
sign = _make_unary(SIGN)
floor = _make_unary(FLOOR)
round = _make_unary(ROUND)
logical_not = _make_unary(NOT)


def compare(name: str, a, b):
    a, b, _ = coerce_pair(a, b)
    return apply(COMPARE[name], (a, b))
