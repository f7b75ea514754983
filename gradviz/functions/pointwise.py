"""The elementwise functions on Tensors: type promotion, Python numbers and in-place forms
as torch has them, then one record of gradviz.ops.pointwise each."""
from __future__ import annotations

import numpy as np

from .. import backend
from .._args import check_int_range, check_number, check_operands, check_tensor, invalid_arguments, is_number
from ..dtypes import C_TYPE, SCALAR_TYPE, fitted, float64, floating_kernel, get_default_dtype, kernel_missing, result_type
from ..autograd.apply import apply, coerce_pair
from ..autograd.fast_paths import one_dtype
from ..autograd.grad_mode import _formula
from ..ops.core import broadcast_error, broadcast_shape
from ..ops.op import Op
from ..tensor import Tensor
from ..creation import tensor, zeros_like
from .index import nonzero
from ..ops.pointwise import (ABS, ACOS, ACOSH, ADD, ADDCDIV, ADDCMUL, ADD_ALPHA, ASIN, ATAN, ATAN2, BITWISE_NOT, FREXP, GCD, LCM,
                             CEIL, CLAMP, CLAMP_MAX, CLAMP_MAX_TENSOR, CLAMP_MIN, CLAMP_MIN_TENSOR, CLAMP_TENSOR,
                             ADD_SCALAR, COMPARE, COPYSIGN, COPYSIGN_SCALAR, COS, COSH, DIV, DIV_ROUNDED, DIV_SCALAR, ERF, EXP,
                             EXP2, EXPM1, FLOOR, FLOOR_DIVIDE, FLOOR_DIVIDE_SCALAR, FMAX, FMIN, FMOD, FMOD_SCALAR,
                             FRAC, GELU, GELU_TANH, HEAVISIDE, HYPOT, ISFINITE, ISINF, ISNAN, ISNEGINF, ISPOSINF,
                             LDEXP, LEAKY_RELU, LEAKY_RELU_BACKWARD, LEAKY_RELU_RESULT, LERP, LERP_TENSOR, LOG, LOG10,
                             LOG1P, LOG2,
                             LOGADDEXP, LOGADDEXP2, LOGIC, LOGIT, MASKED_FILL, MASKED_FILL_TENSOR, MAXIMUM, MINIMUM,
                             MUL, MUL_SCALAR, MVLGAMMA, NAN_TO_NUM, NEG, NOT, POLYGAMMA, POW, POW_SCALAR, RECIPROCAL,
                             RELU, REMAINDER, REMAINDER_SCALAR, ROUND, ROUND_DECIMALS, RPOW_SCALAR, RSQRT, RSUB,
                             RSUB_SCALAR, SGN, SIGMOID, SIGMOID_BACKWARD, SIGN, SIN, SINH, SOFTPLUS, SQRT, SUB,
                             SUB_ALPHA, SUB_SCALAR, TAN, TANH, TANH_BACKWARD, THRESHOLD_BACKWARD, TRUNC, WHERE, XLOGY,
                             XLOGY_SCALAR_OTHER, XLOGY_SCALAR_SELF)
from .public import public


# -- public functions ---------------------------------------------------------------
def binary(op: Op, a, b, *params):
    a, b, dtype = coerce_pair(a, b, op.name)
    return apply(op, (a, b), params, dtype)


def _tensor_or_scalar(op: Op, scalar_op: Op, input, other, *params, opmath: bool = False):
    """`op` when other is a Tensor; else `scalar_op`, with other (in the promoted dtype, or float32 for a
    float16 kernel that reads it in op math: see coerce_pair) as a param."""
    if isinstance(other, Tensor):
        return binary(op, input, other, *params)
    _, const, dtype = coerce_pair(input, other, op.name, opmath)
    return apply(scalar_op, (input,), (const._data, *params), dtype)


def _check_alpha(name: str, input, other, alpha) -> None:
    check_number(name, "alpha", alpha)
    if isinstance(alpha, float) and all(isinstance(t, Tensor) and t._data.dtype.kind in "iub" for t in (input, other)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


@public(method=True, out=True)
def add(input, other, *, alpha=1):
    if type(alpha) is int and alpha == 1 and one_dtype(input, other, Tensor):
        return apply(ADD, (input, other))   # two Tensors of one dtype: nothing to coerce or check
    _check_alpha("add", input, other, alpha)
    if alpha == 1:
        return binary(ADD, input, other)
    return binary(ADD_ALPHA, input, other, alpha)


def bool_subtraction() -> RuntimeError:
    """torch's refusal of a − b for two bool tensors (raised too where a function subtracts them first)."""
    return RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                        "`logical_xor()` operator instead.")


@public('sub', 'subtract', method=True, out=True)
def sub(input, other, *, alpha=1):
    if len([t for t in (input, other) if isinstance(t, Tensor) and t._data.dtype == bool]) == 2:
        raise bool_subtraction()
    if not (type(alpha) is int and alpha == 1):
        _check_alpha("sub", input, other, alpha)
    if alpha == 1:
        return binary(SUB, input, other)
    return binary(SUB_ALPHA, input, other, alpha)


@public('mul', 'multiply', method=True, out=True)
def mul(input, other):
    if one_dtype(input, other, Tensor):
        return apply(MUL, (input, other))   # two Tensors of one dtype: nothing to coerce
    if _formula.active and isinstance(other, (int, float)) and not isinstance(other, bool):
        return _tensor_or_scalar(MUL, MUL_SCALAR, input, other, opmath=True)   # at::mul(Tensor, Scalar) in a VJP formula
    a, b, dtype = coerce_pair(input, other, "mul", True)
    return apply(MUL, (a, b), (), dtype)


@public('div', 'divide', method=True, out=True)
def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:   # true division of integers gives the default float dtype
        a, b, dtype = _float_pair(input, other, True)
        return apply(DIV, (a, b), (), dtype)
    a, b, dtype = coerce_pair(input, other, "div", True)
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    _int_divisor(a, b)
    return apply(DIV_ROUNDED, (a, b), (rounding_mode,), a._data.dtype if dtype is None else dtype)


@public
def rsub(input, other, *, alpha=1):
    if not isinstance(input, Tensor):   # torch's parser takes a number for other only
        raise invalid_arguments("rsub", (input, other), {}, ("Tensor input, Tensor other, *, Number alpha = 1",
                                                             "Tensor input, Number other, Number alpha = 1"))
    return _tensor_or_scalar(RSUB, RSUB_SCALAR, input, other, alpha)


def _int_divisor(input, other) -> None:
    """Integer division by zero has no value: PyTorch raises where NumPy would quietly give 0."""
    a = input._data if isinstance(input, Tensor) else np.asarray(input)
    b = other._data if isinstance(other, Tensor) else np.asarray(other)
    if a.dtype.kind in "iub" and b.dtype.kind in "iub" and not b.all():
        raise RuntimeError("ZeroDivisionError")


@public(method=True, out=True)
def floor_divide(input, other):
    _int_divisor(input, other)
    return _tensor_or_scalar(FLOOR_DIVIDE, FLOOR_DIVIDE_SCALAR, input, other, opmath=True)


@public(method=True, out=True)
def remainder(input, other):
    _int_divisor(input, other)
    return _tensor_or_scalar(REMAINDER, REMAINDER_SCALAR, input, other)


@public("zero_")   # torch.zero_(t): the method Tensor.zero_ as a function
def zero_(input):
    check_tensor("zero_", "input", input, 1)
    return input.zero_()


@public
def masked_fill(input, mask, value):
    if not isinstance(mask, Tensor):   # a list or an array: no signature of torch's takes it
        raise invalid_arguments("masked_fill", (input, mask, value), {},
                                ("Tensor input, Tensor mask, Tensor value", "Tensor input, Tensor mask, Number value"))
    check_int_range(value)
    m = mask._data
    if m.dtype != bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{C_TYPE.get(m.dtype.name, m.dtype.name)}")
    message = broadcast_error(m.shape, tuple(input.shape))
    if message:
        raise RuntimeError(message)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        return apply(MASKED_FILL_TENSOR, (input, value.to(input.dtype)), (m,))
    return apply(MASKED_FILL, (input,), (m, fitted(value, input._data.dtype)))


@public(method=True, out=True)
def pow(input, exponent):
    if not isinstance(input, Tensor):
        _, _, dtype = coerce_pair(exponent, input)   # 2.5 ** int tensor is of the default float dtype
        return apply(RPOW_SCALAR, (exponent,), (input,), dtype)
    if isinstance(exponent, Tensor):
        return binary(POW, input, exponent)
    check_int_range(exponent)
    if input._data.dtype.kind in "biu" and isinstance(exponent, float):
        input = input.float()
    elif input._data.dtype.kind in "biu" and exponent < 0:   # (a tensor exponent gives 0 for 2 ** -1)
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    elif input._data.dtype.kind == "b" and not isinstance(exponent, bool):   # int64, as torch's result_type
        input = input.long()
    return apply(POW_SCALAR, (input,), (exponent,))


@public(out=True)
def where(condition, input=None, other=None):
    if input is None and other is None:   # where(condition) is nonzero(condition, as_tuple=True)
        return nonzero(condition, as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):   # two scalars: a tensor of the first
        input = tensor(input)
    cond = condition._data if isinstance(condition, Tensor) else \
        condition if backend.is_array(condition) else np.asarray(condition)
    if cond.dtype != bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{str(cond.dtype).capitalize().replace('Int64', 'Long').replace('Float32', 'Float')}")
    a, b, dtype = coerce_pair(input, other, "where")
    try:
        return apply(WHERE, (a, b), (cond,), dtype)
    except RuntimeError:   # the condition broadcasts too: torch's words name it first
        if message := broadcast_error(cond.shape, a._data.shape, b._data.shape):
            raise RuntimeError(message) from None
        raise


@public(method=True, out=True)
def maximum(input, other):
    check_operands("maximum", input, other, numbers=False)
    return binary(MAXIMUM, input, other)


@public(method=True, out=True)
def minimum(input, other):
    check_operands("minimum", input, other, numbers=False)
    return binary(MINIMUM, input, other)


def check_bounds(fn: str, min, max, input=None) -> None:
    """torch's TypeError for a clamp bound that is neither a tensor nor a number (input given: the
    function's signatures, else the method's)."""
    if all(b is None or isinstance(b, Tensor) or is_number(b) for b in (min, max)):
        return
    given = {k: v for k, v in (("min", min), ("max", max)) if v is not None}
    head, tail = ("Tensor input, ", ", *, Tensor out = None") if input is not None else ("", "")
    raise invalid_arguments(fn, (input,) if input is not None else (), given,
                            tuple(f"{head}{t} min = None, {t} max = None{tail}" for t in ("Tensor", "Number")))


@public('clamp', 'clip', out=True)
def clamp(input, min=None, max=None):
    check_bounds("clamp", min, max, input)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        xp = backend.namespace_of(input._data)
        lo, hi = (b if isinstance(b, Tensor) else Tensor._make(xp.asarray(0 if b is None else b, input._data.dtype))
                  for b in (min, max))
        dtype = result_type([input._data] + [b._data for b, given in ((lo, min), (hi, max)) if given is not None])
        return apply(CLAMP_TENSOR, (input, lo, hi), (min is not None, max is not None),
                     None if dtype == input._data.dtype else dtype)
    _complex_bounds(input, (min, max), True)
    dtype = result_type((input._data,), tuple(b for b in (min, max) if b is not None))
    min, max = (fitted(bound, dtype) for bound in (min, max))   # an integer tensor's bounds are in its own type
    return apply(CLAMP, (input,), (min, max), None if dtype == input._data.dtype else dtype)


@public
def leaky_relu(input, negative_slope=0.01):
    floating_kernel("leaky_relu_cpu", input._data.dtype)
    return apply(LEAKY_RELU, (input,), (negative_slope,))


def leaky_relu_(input, negative_slope=0.01):
    """In place: the node (LeakyReluBackward1) reads the result, as the input is overwritten."""
    floating_kernel("leaky_relu_cpu", input._data.dtype)
    return input._inplace_op(lambda x: apply(LEAKY_RELU_RESULT, (x,), (negative_slope,)))


@public   # torch.relu_ and F.relu_ (Tensor.relu_ is bound with the other in-place methods)
def relu_(input):
    check_tensor("relu_", "input", input, 1)
    if _is_bool(input):
        raise _NO_BOOL_RELU()
    return input.relu_()


@public   # no Tensor.gelu: torch has none
def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    floating_kernel("GeluKernelImpl", input._data.dtype)
    return apply(GELU_TANH if approximate == "tanh" else GELU, (input,))


@public   # no Tensor.softplus: torch has none
def softplus(input, beta=1.0, threshold=20.0):
    floating_kernel("softplus_cpu", input._data.dtype)
    return apply(SOFTPLUS, (input,), (beta, threshold))


def _make_unary(op, floating=False, bool_error=None):
    """The public function of a one-input op; `floating` casts integer inputs to the default float dtype;
    `bool_error` makes torch's refusal of a bool input, where its kernel has none."""
    def fn(input):
        if bool_error is not None and isinstance(input, Tensor) and input._data.dtype.kind == "b":
            raise bool_error()
        return apply(op, (_floating(input) if floating else input,))
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"{op.formula}  (grad_fn {op.torch_name}; VJP {op.vjp_formulas[0] if op.vjp_formulas else '-'})"
    return fn


_neg = _make_unary(NEG)


def _no_bool(kernel: str):
    """torch's words when a kernel has no bool version (to raise: called when it is met)."""
    return lambda: kernel_missing(kernel, bool)


_NO_BOOL_RELU = lambda: RuntimeError("Boolean inputs not supported for relu")   # noqa: E731


@public('neg', 'negative', method=True, out=True)
def neg(input):
    if input._data.dtype == bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return _neg(input)


exp = public(method=True, out=True)(_make_unary(EXP, floating=True))
log = public(method=True, out=True)(_make_unary(LOG, floating=True))
log1p = public(method=True, out=True)(_make_unary(LOG1P, floating=True))
sqrt = public(method=True, out=True)(_make_unary(SQRT, floating=True))
rsqrt = public(method=True, out=True)(_make_unary(RSQRT, floating=True))
reciprocal = public(method=True, out=True)(_make_unary(RECIPROCAL, floating=True))
sin = public(method=True, out=True)(_make_unary(SIN, floating=True))
cos = public(method=True, out=True)(_make_unary(COS, floating=True))
tan = public(method=True, out=True)(_make_unary(TAN, floating=True))
tanh = public(method=True, out=True)(_make_unary(TANH, floating=True))
sigmoid = public(method=True, out=True)(_make_unary(SIGMOID, floating=True))
relu = public(method=True)(_make_unary(RELU, bool_error=_NO_BOOL_RELU))
erf = public(method=True, out=True)(_make_unary(ERF, floating=True))
abs = absolute = public('abs', 'absolute', method=True, out=True)(_make_unary(ABS, bool_error=_no_bool("abs_cpu")))
floor = public(method=True, out=True)(_make_unary(FLOOR, bool_error=_no_bool("floor_vml_cpu")))
_round = _make_unary(ROUND, bool_error=_no_bool("round_vml_cpu"))


@public(method=True, out=True)
def sign(input):
    """The sign; a bool tensor's is itself (a copy), as torch's, where NumPy has no sign of a bool."""
    return Tensor._make(input._data.copy()) if _is_bool(input) else apply(SIGN, (input,))


@public(method=True, out=True)
def sgn(input):
    return Tensor._make(input._data.copy()) if _is_bool(input) else apply(SGN, (input,))


def _is_bool(input) -> bool:
    return isinstance(input, Tensor) and input._data.dtype.kind == "b"


@public(method=True, out=True)
def round(input, *, decimals=None):
    """Half to even, as PyTorch; decimals=d rounds a · 10ᵈ (RoundBackward1 whenever decimals= is given,
    0 included, as torch picks its overload by the arguments given)."""
    return _round(input) if decimals is None else apply(ROUND_DECIMALS, (input,), (int(decimals),))


logical_not = public(method=True, out=True)(_make_unary(NOT))


def compare(name: str, a, b):
    """The comparison or bitwise op `name` of a and b (eq, lt, bitwise_and, ...): what torch.eq and the
    Tensor's ==, <, & call."""
    if not name.startswith("bitwise_"):   # torch's two signatures (bitwise ones take a Number input too)
        check_operands(name, a, b)
    a, b, common = coerce_pair(a, b, name)
    if name.startswith("bitwise_"):
        kernel = _SHIFT_KERNELS.get(name)
        dtype = common or a._data.dtype
        if dtype.kind in "fc" or (kernel and dtype.kind == "b"):   # & | ^ take integers and bools, << >> integers
            raise kernel_missing(kernel or name + "_cpu", dtype)
        if common is not None:   # torch's kernel reads both operands in the common dtype (no grad: they are
            # integers or bools), so a uint8 tensor shifted by a zero-dim int64 tensor's 257 is shifted by 1
            a, b = (t if t._data.dtype == common else Tensor._make(t._data.astype(common)) for t in (a, b))
    return apply(COMPARE[name], (a, b))


_SHIFT_KERNELS = {"bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu"}   # as torch names them


def _comparison(name: str, *aliases: str):
    def fn(input, other):
        return compare(name, input, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: elementwise comparison, a bool tensor with no grad"
    return public(name, *aliases, method=True, out=True)(fn)


eq = _comparison("eq")
ne = not_equal = _comparison("ne", "not_equal")
gt = greater = _comparison("gt", "greater")
lt = less = _comparison("lt", "less")
ge = greater_equal = _comparison("ge", "greater_equal")
le = less_equal = _comparison("le", "less_equal")


def _close(fn: str, input, other, rtol, atol):
    """torch's checks before comparing: a tensor of the same dtype (torch converts neither: a float32
    gradient against a float64 one is refused, "Float did not match Double"), tolerances not
    negative, shapes that broadcast."""
    check_tensor(fn, "input", input, 1)
    check_tensor(fn, "other", other, 2)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{SCALAR_TYPE[input._data.dtype.name]} did not match {SCALAR_TYPE[other._data.dtype.name]}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value:g}")
    broadcast_shape(tuple(input.shape), tuple(other.shape))


@public(method=True, out=True)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _close("isclose", input, other, rtol, atol)
    xp = backend.namespace_of(input._data)
    return Tensor._make(xp.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@public(method=True)
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    _close("allclose", input, other, rtol, atol)
    xp = backend.namespace_of(input._data)
    return bool(xp.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@public
def equal(input, other) -> bool:
    return input.equal(other)


def _floating(input):
    """Integer inputs of a float function become the default float dtype (log2 of an int tensor)."""
    if input._data.dtype.kind in "biu":
        return input.to(get_default_dtype())
    return input


log2 = public(method=True, out=True)(_make_unary(LOG2, floating=True))
log10 = public(method=True, out=True)(_make_unary(LOG10, floating=True))
exp2 = public(method=True, out=True)(_make_unary(EXP2, floating=True))
expm1 = public(method=True, out=True)(_make_unary(EXPM1, floating=True))
sinh = public(method=True, out=True)(_make_unary(SINH, floating=True))
cosh = public(method=True, out=True)(_make_unary(COSH, floating=True))
asin = arcsin = public('arcsin', 'asin', method=True, out=True)(_make_unary(ASIN, floating=True))
acos = arccos = public('acos', 'arccos', method=True, out=True)(_make_unary(ACOS, floating=True))
atan = arctan = public('arctan', 'atan', method=True, out=True)(_make_unary(ATAN, floating=True))
ceil = public(method=True, out=True)(_make_unary(CEIL, bool_error=_no_bool("ceil_vml_cpu")))
trunc = fix = public('fix', 'trunc', method=True, out=True)(_make_unary(TRUNC, bool_error=_no_bool("trunc_vml_cpu")))
isnan = public(method=True)(_make_unary(ISNAN))
isinf = public(method=True)(_make_unary(ISINF))
isfinite = public(method=True)(_make_unary(ISFINITE))


@public(method=True, out=True)
def square(input):
    """a², recorded as PyTorch records it: pow(a, 2) (PowBackward0)."""
    return pow(input, 2)


@public(out=True)
def negative(input):
    return neg(input)


@public(method=True)
def positive(input):
    """The tensor itself, as torch.positive returns it."""
    return input


@public(method=True, out=True)
def true_divide(input, other):
    return div(input, other)


def _float_pair(a, b, opmath: bool = False):
    """coerce_pair, where two integer or bool operands give the default float dtype and are computed in
    it, as torch's true division and atan2 are (NumPy's atan2 of two small integer types is float16's;
    no gradient flows through integers, so the cast copies record nothing)."""
    a, b, dtype = coerce_pair(a, b, "div", opmath)
    if a._data.dtype.kind in "biu" and b._data.dtype.kind in "biu":
        dtype = get_default_dtype().np
        a, b = (Tensor._make(t._data.astype(dtype)) for t in (a, b))
    return a, b, dtype


@public('arctan2', 'atan2', method=True, out=True)
def atan2(input, other):
    check_operands("atan2", input, other, numbers=False)
    a, b, dtype = _float_pair(input, other)
    return apply(ATAN2, (a, b), (), dtype)


arctan2 = atan2


@public(method=True, out=True)
def hypot(input, other):
    check_operands("hypot", input, other, numbers=False)
    floating_kernel("hypot_cpu", result_type((input._data, other._data)))
    return binary(HYPOT, input, other)


@public(out=True)
def lerp(input, end, weight):
    """torch's checks before its kernel's: `end` of input's dtype, and so a weight tensor unless it is
    zero-dim (which only takes part in promotion, as a number would)."""
    _same_dtype_as_input("end", input, end)
    if isinstance(weight, Tensor) and weight._data.ndim:
        _same_dtype_as_input("weight", input, weight)
    floating_kernel("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar", input._data.dtype)
    if isinstance(weight, Tensor):
        return apply(LERP_TENSOR, (input, end, weight))
    return apply(LERP, (input, end), (weight,))


def _same_dtype_as_input(name: str, input, other) -> None:
    if isinstance(other, Tensor) and other._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected dtype {C_TYPE[input._data.dtype.name]} for `{name}` but got dtype "
                           f"{C_TYPE[other._data.dtype.name]}")


@public(out=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    return apply(ADDCMUL, (input, tensor1, tensor2), (value,))


@public(out=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    return apply(ADDCDIV, (input, tensor1, tensor2), (value,))


@public(out=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return apply(NAN_TO_NUM, (input,), (nan, posinf, neginf))


@public(out=True)
def logit(input, eps=None):
    return apply(LOGIT, (_floating(input),), (eps,))


@public(method=True, out=True)
def fmod(input, other):
    check_operands("fmod", input, other)
    _int_divisor(input, other)
    return _tensor_or_scalar(FMOD, FMOD_SCALAR, input, other)


@public(method=True, out=True)
def float_power(input, exponent):
    """pow in double precision: both operands are cast to float64 first (ToCopyBackward0)."""
    if isinstance(input, Tensor) and input._data.dtype != np.float64:
        input = input.to(float64)
    if isinstance(exponent, Tensor):
        if exponent._data.dtype != np.float64:
            exponent = exponent.to(float64)
    elif isinstance(input, Tensor):
        exponent = float(exponent)
    return pow(input, exponent)


# -- forward mode (autograd.forward_ad): JVPs derived from the VJPs above ---------------------
# An elementwise op's Jacobian is diagonal, so J·t is its own VJP applied to t; sums and
# differences are linear and a product is bilinear, so those map tangents as they map values.


def _recorded_as(op: Op, tensor_rule) -> None:
    """Keep op's array VJP; on Tensors (create_graph=True) record `tensor_rule` instead."""
    array_rule = op.vjp[0]
    op.vjp = (lambda xp, *args: array_rule(xp, *args) if xp.arrays else tensor_rule(*args),)


_recorded_as(TANH, lambda g, c, a: apply(TANH_BACKWARD, (g, c)))
_recorded_as(SIGMOID, lambda g, c, a: apply(SIGMOID_BACKWARD, (g, c)))
_recorded_as(RELU, lambda g, c, a: apply(THRESHOLD_BACKWARD, (g, c)))
_recorded_as(LEAKY_RELU, lambda g, c, a, s: apply(LEAKY_RELU_BACKWARD, (g, a), (s,)))
# grad * (p * a^(p−1)), grouped as torch's pow_backward: MulBackward0(grad, MulBackward1(PowBackward0))
_recorded_as(POW_SCALAR, lambda g, c, a, p: _zeros_like(g) if p == 0 else g * (a ** (p - 1) * p))


def _zeros_like(g):
    return zeros_like(g)


def _scalar_op(op: Op, input, other):
    """input ∘ other for a Python number, as torch's C++ compositions record it (the Scalar overloads:
    AddBackward1, SubBackward1, MulBackward1, DivBackward1), promoted as torch promotes (an integer
    tensor and a float give the default float dtype)."""
    kind = input._data.dtype.kind
    dtype = None if kind in "fc" else result_type((input._data,), (other,))
    return apply(op, (input,), (other,), None if dtype == input._data.dtype else dtype)


def mul_scalar(input, other):
    return _scalar_op(MUL_SCALAR, input, other)


def div_scalar(input, other):
    return _scalar_op(DIV_SCALAR, input, other)


def add_scalar(input, other):
    return _scalar_op(ADD_SCALAR, input, other)


def sub_scalar(input, other):
    return _scalar_op(SUB_SCALAR, input, other)


acosh = arccosh = public('acosh', 'arccosh', method=True)(_make_unary(ACOSH, floating=True))


@public(method=True)
def frac(input):
    floating_kernel("frac_cpu", input._data.dtype)
    return apply(FRAC, (input,))


@public
def polygamma(n: int, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return apply(POLYGAMMA, (_floating(input),), (int(n),))


@public(method=True)
def mvlgamma(input, p: int):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return apply(MVLGAMMA, (_floating(input),), (int(p),))


def _complex_check(name, input):
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"{name} does not support complex inputs.")


@public(method=True)
def isposinf(input):
    _complex_check("isposinf", input)
    return apply(ISPOSINF, (input,))


@public(method=True)
def isneginf(input):
    _complex_check("isneginf", input)
    return apply(ISNEGINF, (input,))


def _scalar_tensor(x) -> bool:
    return not isinstance(x, Tensor)


@public(method=True)
def xlogy(input, other):
    if _scalar_tensor(input):
        b = _floating(other)
        return apply(XLOGY_SCALAR_SELF, (b,), (input,))
    if _scalar_tensor(other):
        a = _floating(input)
        return apply(XLOGY_SCALAR_OTHER, (a,), (other,))
    a, b, dtype = _float_pair(input, other)
    return apply(XLOGY, (a, b), (), dtype)


def _float_only(name, input, other):
    """logaddexp of integers: PyTorch has no integer kernel."""
    for t in (input, other):
        if isinstance(t, Tensor) and t._data.dtype.kind in "biu":
            raise RuntimeError(f"\"{name}_cpu\" not implemented for '{SCALAR_TYPE[t._data.dtype.name]}'")


@public(method=True)
def logaddexp(input, other):
    check_operands("logaddexp", input, other, numbers=False)
    _float_only("logaddexp", input, other)
    return binary(LOGADDEXP, input, other)


@public(method=True)
def logaddexp2(input, other):
    check_operands("logaddexp2", input, other, numbers=False)
    _float_only("logaddexp2", input, other)
    return binary(LOGADDEXP2, input, other)


@public(method=True)
def copysign(input, other):
    check_operands("copysign", input, other)
    if _scalar_tensor(other):
        a = _floating(input)
        return apply(COPYSIGN_SCALAR, (a,), (float(other),))
    a, b, dtype = _float_pair(input, other)
    return apply(COPYSIGN, (a, b), (), dtype)


@public(method=True)
def fmax(input, other):
    check_operands("fmax", input, other, numbers=False)
    return binary(FMAX, input, other)


@public(method=True)
def fmin(input, other):
    check_operands("fmin", input, other, numbers=False)
    return binary(FMIN, input, other)


@public(method=True)
def ldexp(input, other):
    check_operands("ldexp", input, other, numbers=False)
    a, b, dtype = _float_pair(input, other)
    return apply(LDEXP, (a, b), (), dtype)


@public(method=True)
def heaviside(input, values):
    check_operands("heaviside", input, values, "values", numbers=False)
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return apply(HEAVISIDE, (input, values))


def _complex_bounds(input, bounds, clamp: bool) -> None:
    """torch refuses a complex bound: clamp of a floating input reads its bounds as doubles first."""
    if any(isinstance(b, complex) for b in bounds):
        if clamp and input._data.dtype.kind == "f":
            raise RuntimeError("value cannot be converted to type double without overflow")
        raise NotImplementedError("clamp is not supported for complex types")


def _clamp_one(input, bound, tensor_op, scalar_op):
    """clamp_min / clamp_max: a tensor bound is a second input, a number a parameter; the result
    takes torch's promoted dtype either way."""
    if isinstance(bound, Tensor):
        a, b, dtype = coerce_pair(input, bound)
        return apply(tensor_op, (a, b), (), dtype)
    _complex_bounds(input, (bound,), False)
    dtype = result_type((input._data,), (bound,))
    return apply(scalar_op, (input,), (bound,), None if dtype == input._data.dtype else dtype)


@public(method=True)
def clamp_max(input, max):
    check_operands("clamp_max", input, max, "max")
    return _clamp_one(input, max, CLAMP_MAX_TENSOR, CLAMP_MAX)


@public(method=True)
def clamp_min(input, min):
    check_operands("clamp_min", input, min, "min")
    return _clamp_one(input, min, CLAMP_MIN_TENSOR, CLAMP_MIN)


def _logical(name: str):
    def fn(input, other):
        check_operands(name, input, other, numbers=False)
        a, b, _ = coerce_pair(input, other, name)
        return apply(LOGIC[name], (a, b))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: elementwise logic on nonzero entries, a bool tensor with no grad"
    return fn


logical_and, logical_or, logical_xor = (public(method=True)(_logical(n))
                                        for n in ("logical_and", "logical_or", "logical_xor"))


def _bitwise(name: str):
    def fn(input, other):
        return compare(name, input, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: elementwise on integer and bool tensors, no grad"
    return fn


bitwise_and, bitwise_or, bitwise_xor = (public(method=True)(_bitwise(n))
                                        for n in ("bitwise_and", "bitwise_or", "bitwise_xor"))
bitwise_left_shift, bitwise_right_shift = (public(method=True, out=True)(_bitwise(n))
                                           for n in ("bitwise_left_shift", "bitwise_right_shift"))


def _integer_only(name: str, op: Op):
    """gcd / lcm: integer tensors only, each operand a Tensor (torch's parser takes no number here)."""
    def fn(input, other):
        check_tensor(name, "input", input, 1)
        check_tensor(name, "other", other, 2)
        a, b, common = coerce_pair(input, other, name)
        if (common or a._data.dtype).kind not in "iu":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{SCALAR_TYPE[(common or a._data.dtype).name]}\'')
        return apply(op, (a, b), (), common)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: elementwise on integer tensors (the result non-negative), no grad"
    return public(method=True, out=True)(fn)


gcd, lcm = _integer_only("gcd", GCD), _integer_only("lcm", LCM)


def _written_into_input(fn):
    """torch.gcd_ / torch.lcm_: fn's result written into input (Tensor's NAME_ methods are made alike)."""
    def inplace(input, other):
        check_tensor(fn.__name__ + "_", "input", input, 1)
        return input._inplace_op(fn, other)
    inplace.__name__ = inplace.__qualname__ = fn.__name__ + "_"
    return public(inplace.__name__)(inplace)


gcd_, lcm_ = _written_into_input(gcd), _written_into_input(lcm)


@public(method=True, out=True)
def frexp(input):
    """(mantissa, exponent) with input = mantissa · 2^exponent, ½ ≤ |mantissa| < 1; the exponent int32."""
    check_tensor("frexp", "input", input, 1)
    if input._data.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    exponent = backend.namespace_of(input._data).frexp(input._data)[1].astype(np.int32)
    return _Frexp((apply(FREXP, (input,), (exponent,)), Tensor._make(exponent)))


class _Frexp(tuple):
    """torch.return_types.frexp: a (mantissa, exponent) pair with names."""

    mantissa = property(lambda self: self[0])
    exponent = property(lambda self: self[1])

    def __repr__(self):
        return f"torch.return_types.frexp(\nmantissa={self[0]!r},\nexponent={self[1]!r})"


@public(method=True)
def bitwise_not(input):
    if input._data.dtype.kind in "fc":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{SCALAR_TYPE[input._data.dtype.name]}'")
    return apply(BITWISE_NOT, (input,))


