"""Where torch's gradient kernels round differently from the textbook formula, gradviz rounds as
torch does, bit for bit: tanh's and asin's 1 − y² is one fused multiply-add, and sigmoid, rsqrt,
reciprocal, division and pow group their products as torch's kernels do. This is what makes the
"exact" column of a manual-backprop exercise (compare `dt == t.grad`) read as it does in torch.
Each rule is fed torch's own forward values, so only the gradient's rounding is compared."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz
from gradviz.ops import pointwise
from gradviz.ops.core import NUMPY

RNG = np.random.default_rng(7)
N = 50_000


def _values(kind, dtype):
    x = RNG.standard_normal(N) * 3
    x = {"any": x, "positive": np.abs(x) + 0.1, "unit": np.clip(x / 12, -0.95, 0.95)}[kind]
    return x.astype(dtype), RNG.standard_normal(N).astype(dtype)


def _torch_grad(fn, a, g):
    t = torch.tensor(a, requires_grad=True)
    out = fn(t)
    out.backward(torch.tensor(g))
    return out.detach().numpy(), t.grad.numpy()


CASES = [  # (record, torch function, inputs, params)
    ("TANH", torch.tanh if torch else None, "any", ()),
    ("SIGMOID", torch.sigmoid if torch else None, "any", ()),
    ("RSQRT", torch.rsqrt if torch else None, "positive", ()),
    ("RECIPROCAL", torch.reciprocal if torch else None, "positive", ()),
    ("ASIN", torch.asin if torch else None, "unit", ()),
    ("ACOS", torch.acos if torch else None, "unit", ()),
    ("POW_SCALAR", (lambda t: t ** 3), "any", (3,)),
    ("POW_SCALAR", (lambda t: t ** -1), "positive", (-1,)),
    ("POW_SCALAR", (lambda t: t ** 2), "any", (2,)),
]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fn,kind,params", CASES, ids=lambda c: c if isinstance(c, str) else "")
def test_gradient_rounds_as_torch(name, fn, kind, params, dtype):
    a, g = _values(kind, dtype)
    out, expected = _torch_grad(fn, a, g)
    ours = getattr(pointwise, name).vjp[0](NUMPY, g, out, a, *params)
    same = np.mean(ours == expected)
    # asin/acos end in 1/√·, which torch computes with a vectorized square root: a few ulps apart
    assert same >= (0.97 if name in ("ASIN", "ACOS") else 1.0), same


@needs_torch
@pytest.mark.torch
def test_half_precision_tanh_gradient_is_computed_in_float32_as_torch():
    a, g = _values("any", np.float16)
    out, expected = _torch_grad(torch.tanh, a, g)
    assert np.array_equal(pointwise.TANH.vjp[0](NUMPY, g, out, a), expected)


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_division_gradient_of_the_denominator_rounds_as_torch(dtype):
    a, _ = _values("any", dtype)
    b, g = _values("positive", dtype)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out = ta / tb
    out.backward(torch.tensor(g))
    for slot, expected in enumerate((ta.grad.numpy(), tb.grad.numpy())):
        assert np.array_equal(pointwise.DIV.vjp[slot](NUMPY, g, out.detach().numpy(), a, b), expected)


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("exponent", [3, -2, -0.5, 2, -1])
def test_pow_with_torchs_special_exponents_has_torchs_bits(exponent):
    a, _ = _values("positive", np.float32)
    assert np.array_equal(gradviz.tensor(a).pow(exponent).numpy(), torch.tensor(a).pow(exponent).numpy())


def test_the_fused_square_is_one_rounding_of_the_exact_value():
    """Checked without torch: 1 − y² from exact rational arithmetic, rounded once."""
    from fractions import Fraction
    y = np.concatenate([RNG.standard_normal(2000), RNG.standard_normal(2000) * 1e-4, [0.0, 1.0, -1.0]])
    ours = pointwise.fused_one_minus_square(NUMPY, y)
    exact = np.array([float(1 - Fraction(v) * Fraction(v)) for v in y])   # float() rounds to nearest
    assert np.array_equal(ours, exact)
    y32 = y.astype(np.float32)
    exact32 = np.array([np.float32(float(1 - Fraction(float(v)) ** 2)) for v in y32])
    assert np.array_equal(pointwise.fused_one_minus_square(NUMPY, y32), exact32)


def test_graphs_of_gradients_keep_torchs_nodes():
    """With create_graph the rules run on Tensors: the same formulas, recorded as torch records them."""
    x = gradviz.tensor([0.3, -0.2], dtype=gradviz.float64, requires_grad=True)
    (g,) = gradviz.autograd.grad(gradviz.asin(x).sum(), x, create_graph=True)
    assert g.grad_fn.name() in ("DivBackward0", "MulBackward0")
    np.testing.assert_allclose(g.detach().numpy(), 1 / np.sqrt(1 - x.detach().numpy() ** 2))
    (t,) = gradviz.autograd.grad(gradviz.tanh(x).sum(), x, create_graph=True)
    assert t.grad_fn.name() == "TanhBackwardBackward0"
    np.testing.assert_allclose(t.detach().numpy(), 1 - np.tanh(x.detach().numpy()) ** 2)


def _second_order(lib, fn, x, v):
    """The gradient of fn at x with create_graph=True, its grad_fn and next nodes, and ∂(gradient · v)/∂x."""
    x = lib.tensor(x, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(fn(lib, x).sum(), x, create_graph=True)
    fn_ = g.grad_fn
    name = fn_.name() if lib is gradviz else type(fn_).__name__
    nexts = sorted((type(f).__name__ if lib is not gradviz else f.name()).replace("torch::autograd::", "")
                   for f, _ in fn_.next_functions if f is not None)
    (gg,) = lib.autograd.grad((g * lib.tensor(v, dtype=lib.float64)).sum(), x, allow_unused=True,
                              materialize_grads=True)
    return name, nexts, g.detach().numpy(), gg.detach().numpy()


@needs_torch
@pytest.mark.parametrize("fn", [lambda lib, x: lib.nn.functional.leaky_relu(x, 0.1),
                                lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 0.5),
                                lambda lib, x: lib.nn.functional.relu6(x * 8)],
                         ids=["leaky_relu", "hardtanh", "relu6"])
def test_piecewise_linear_gradients_keep_a_graph_as_torchs(fn):
    """torch records leaky_relu's and hardtanh's first derivative as one node (LeakyReluBackwardBackward0,
    HardtanhBackwardBackward0) that depends on the input, so the gradient requires grad and can be
    differentiated again (to zeros)."""
    x = np.array([-0.9, -0.3, 0.2, 0.7, 0.95])
    v = np.array([0.5, -1.0, 2.0, 0.25, -0.75])
    ours, theirs = _second_order(gradviz, fn, x, v), _second_order(torch, fn, x, v)
    assert ours[:2] == theirs[:2]
    np.testing.assert_array_equal(ours[2], theirs[2])
    np.testing.assert_array_equal(ours[3], theirs[3])


@needs_torch
def test_cos_gradient_negates_sin_as_torch():
    """torch's cos rule is grad * -sin(a): under create_graph the gradient is MulBackward0 over NegBackward0."""
    x = np.array([-0.9, -0.3, 0.2, 0.7, 0.95])
    v = np.array([0.5, -1.0, 2.0, 0.25, -0.75])
    fn = lambda lib, x: lib.cos(x)
    ours, theirs = _second_order(gradviz, fn, x, v), _second_order(torch, fn, x, v)
    assert ours[:2] == theirs[:2] == ("MulBackward0", ["NegBackward0"])
    np.testing.assert_array_equal(ours[2], theirs[2])
    np.testing.assert_array_equal(ours[3], theirs[3])


# -- float16: torch's CPU kernels compute half precision in float32 and round once -----------------------
HALF = np.arange(2 ** 16, dtype=np.uint16).view(np.float16)
HALF = HALF[np.isfinite(HALF)]   # every finite float16


def _ordered(a):
    """float16 bits as integers in the order of the values (-0 and +0 one apart), so differences are ulps."""
    bits = a.view(np.uint16).astype(np.int32)
    return np.where(bits & 0x8000, 0x8000 - bits, bits)


def _half_ulps(ours, theirs):
    ours, theirs = np.asarray(ours, np.float16), np.asarray(theirs, np.float16)
    both_nan = np.isnan(ours) & np.isnan(theirs)
    return np.where(both_nan, 0, np.abs(_ordered(ours) - _ordered(theirs)))


def _half_run(lib, fn, g):
    x = lib.tensor(HALF, requires_grad=True)
    y = fn(lib, x)
    y.backward(lib.tensor(g))
    return y.detach().numpy(), x.grad.numpy()


EXACT = (0, 0)
HALF_CASES = [  # (name, program, forward, gradient): how many inputs may be how many units in the last place off
    # exact: the kernel is one float32 computation rounded once, and gradviz's float32 steps are torch's
    ("exp", lambda t, x: t.exp(x), EXACT, EXACT),
    ("cos", lambda t, x: t.cos(x), EXACT, EXACT),
    ("log10", lambda t, x: t.log10(x), EXACT, None),
    ("rsqrt", lambda t, x: t.rsqrt(x), EXACT, None),
    ("erfc", lambda t, x: t.erfc(x), EXACT, None),
    ("erfinv", lambda t, x: t.erfinv(x), EXACT, None),
    ("elu", lambda t, x: t.nn.functional.elu(x), EXACT, EXACT),
    ("celu", lambda t, x: t.nn.functional.celu(x), EXACT, EXACT),
    ("hardswish", lambda t, x: t.nn.functional.hardswish(x), EXACT, EXACT),
    ("hardsigmoid", lambda t, x: t.nn.functional.hardsigmoid(x), EXACT, EXACT),
    ("leaky_relu", lambda t, x: t.nn.functional.leaky_relu(x, 0.1), EXACT, EXACT),
    # torch's float32 exp, tanh and erf (vectorized) are an ulp from NumPy's on a few inputs, which the
    # rounding to float16 shows now and then (before, one input in five was one or two ulps off); GELU's
    # 1 + erf(x/√2) cancels below x = -3.8, where that ulp becomes a few
    ("sigmoid", lambda t, x: t.sigmoid(x), (5, 1), (5, 1)),
    ("selu", lambda t, x: t.nn.functional.selu(x), (5, 1), (5, 1)),
    ("silu", lambda t, x: t.nn.functional.silu(x), (5, 1), (5, 1)),
    ("softplus", lambda t, x: t.nn.functional.softplus(x), (5, 1), (5, 1)),
    ("mish", lambda t, x: t.nn.functional.mish(x), (5, 1), (10, 1)),
    ("logsigmoid", lambda t, x: t.nn.functional.logsigmoid(x), (20, 1), None),
    ("gelu", lambda t, x: t.nn.functional.gelu(x), (250, 3), (60, 1)),
    ("gelu_tanh", lambda t, x: t.nn.functional.gelu(x, approximate="tanh"), (300, 3), (300, 64)),
]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,fn,forward,gradient", HALF_CASES, ids=[c[0] for c in HALF_CASES])
def test_half_precision_matches_torch_bit_for_bit(name, fn, forward, gradient):
    """Every finite float16 input: the forward and the gradient have torch's bits, but for the inputs a row
    allows (None: a gradient torch composes of several half-precision steps, which gradviz does not follow)."""
    g = np.random.default_rng(0).standard_normal(HALF.size).astype(np.float16)
    ours, theirs = _half_run(gradviz, fn, g), _half_run(torch, fn, g)
    for part, allowed in enumerate((forward, gradient)):
        if allowed is not None:
            off = _half_ulps(ours[part], theirs[part])
            assert np.count_nonzero(off) <= allowed[0] and off.max() <= allowed[1], (name, part, np.count_nonzero(off),
                                                                                     off.max())


# -- float16 with a Python number: torch reads the number as its kernel does -------------------------------
# mul and div read it in float32 (the op-math type, `original_scalar_value<opmath_t>`) and round once; add and
# sub round it to float16 and then fuse α·b + a; pow rounds the exponent to float16 and computes one float32
# power; the backward formulas multiply by numbers with mul(Tensor, Scalar), so in float32 too.
def _half_and(lib, x):
    return lib.tensor(HALF * np.float16(0.5) + np.float16(1))   # a second operand: finite, no zero


HALF_SCALAR_CASES = [  # (name, program): forward and gradient have torch's bits on every finite float16 input
    ("x * 0.1", lambda t, x: x * 0.1),
    ("1e-3 * x", lambda t, x: 1e-3 * x),
    ("x * (1/3)", lambda t, x: x * (1 / 3)),
    ("x * -0.7", lambda t, x: t.mul(x, -0.7)),
    ("x / 0.1", lambda t, x: x / 0.1),
    ("x / 1e-3", lambda t, x: t.div(x, 1e-3)),
    ("0.3 / x", lambda t, x: 0.3 / x),
    ("x ** 0.1", lambda t, x: x ** 0.1),
    ("x ** 2.5", lambda t, x: x ** 2.5),
    ("x ** 3", lambda t, x: x ** 3),
    ("x ** -2", lambda t, x: x ** -2),
    ("x ** -0.5", lambda t, x: x ** -0.5),
    ("x ** 0.5", lambda t, x: x ** 0.5),
    ("1.3 ** x", lambda t, x: 1.3 ** x),
    ("add alpha", lambda t, x: t.add(x, _half_and(t, x) * x, alpha=0.3)),
    ("sub alpha", lambda t, x: t.sub(x, _half_and(t, x) * x, alpha=1 / 3)),
    ("add number alpha", lambda t, x: t.add(x, 0.3, alpha=2.5)),
    ("rsub alpha", lambda t, x: t.rsub(x, 0.7, alpha=0.3)),
    ("div floor", lambda t, x: t.div(x, 0.1, rounding_mode="floor")),
    ("div trunc", lambda t, x: t.div(x, 0.1, rounding_mode="trunc")),
    ("lerp", lambda t, x: t.lerp(x, _half_and(t, x), 0.3)),
    ("addcmul", lambda t, x: t.addcmul(x, x, _half_and(t, x), value=0.1)),
    ("addcdiv", lambda t, x: t.addcdiv(x, x, _half_and(t, x), value=0.1)),
    ("xlogy", lambda t, x: t.xlogy(x, 2.5)),
    ("xlogy of a number", lambda t, x: t.xlogy(0.3, x.abs() + 1)),
    ("softshrink", lambda t, x: t.nn.functional.softshrink(x, 0.1)),
    ("threshold", lambda t, x: t.nn.functional.threshold(x, 0.001, -1.0)),
    ("hardtanh", lambda t, x: t.nn.functional.hardtanh(x, -0.1, 0.1)),
    ("mul_", lambda t, x: (x * 1).mul_(0.1)),
    ("div_", lambda t, x: (x * 1).div_(0.1)),
    ("add_ alpha", lambda t, x: (x * 1).add_(x, alpha=0.3)),
]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,fn", HALF_SCALAR_CASES, ids=[c[0] for c in HALF_SCALAR_CASES])
def test_half_precision_with_a_number_matches_torch_bit_for_bit(name, fn):
    g = np.random.default_rng(0).standard_normal(HALF.size).astype(np.float16)
    ours, theirs = _half_run(gradviz, fn, g), _half_run(torch, fn, g)
    for part in (0, 1):
        off = _half_differ(ours[part], theirs[part], signed_zeros=name not in _ZERO_SIGN_VARIES)
        assert not off.any(), (name, part, np.count_nonzero(off), HALF[off][:5])


# torch's own vectorized and scalar loops give zeros of different signs here (softshrink: +0 from the
# vector loop, -0 from the scalar one on the last elements): only the values are compared
_ZERO_SIGN_VARIES = {"softshrink"}


def _half_differ(ours, theirs, signed_zeros=True):
    """Where two float16 results are not the same value: another number, or a zero of the other sign."""
    off = _half_ulps(ours, theirs) != 0
    if signed_zeros:
        off |= (ours == 0) & (theirs == 0) & (np.signbit(ours) != np.signbit(theirs))
    return off


HALF_NO_GRAD_CASES = [  # what no gradient flows through, and the in-place fast path of a tensor outside any graph
    ("x // 0.1", lambda t, x: x // 0.1),
    ("floor_divide", lambda t, x: t.floor_divide(x, -0.7)),
    ("mul_", lambda t, x: x.mul_(0.1)),
    ("div_", lambda t, x: x.div_(1e-3)),
    ("*=", lambda t, x: x.__imul__(1 / 3)),
    ("add_ alpha", lambda t, x: x.add_(_half_and(t, x), alpha=0.3)),
    ("sub_ alpha", lambda t, x: x.sub_(_half_and(t, x), alpha=0.3)),
]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,fn", HALF_NO_GRAD_CASES, ids=[c[0] for c in HALF_NO_GRAD_CASES])
def test_half_precision_with_a_number_without_grad_matches_torch_bit_for_bit(name, fn):
    ours, theirs = (fn(lib, lib.tensor(HALF)).numpy() for lib in (gradviz, torch))
    off = _half_differ(ours, theirs)
    assert not off.any(), (name, np.count_nonzero(off), HALF[off][:5])


@needs_torch
@pytest.mark.torch
def test_half_precision_mul_by_a_number_keeps_torchs_graph_and_constant():
    """The number is kept in float32 for the kernel; the node is still MulBackward0 and shows 0.1."""
    x = gradviz.tensor([1.0, 2.0], dtype=gradviz.float16, requires_grad=True)
    y = x * 0.1
    assert y.dtype == gradviz.float16 and y.grad_fn.name() == "MulBackward0"
    assert float(y.grad_fn._saved_other) == pytest.approx(0.1)


def _half_higher_order(lib, fn, g):
    """fn's value, its gradient with create_graph, the gradient of that, and the forward-mode tangent."""
    x = lib.tensor(HALF_SMALL, requires_grad=True)
    y = fn(lib, x)
    (dx,) = lib.autograd.grad(y, x, lib.tensor(g), create_graph=True)
    (ddx,) = lib.autograd.grad(dx, x, lib.tensor(g))
    fwd = lib.autograd.forward_ad
    with fwd.dual_level():
        tangent = fwd.unpack_dual(fn(lib, fwd.make_dual(lib.tensor(HALF_SMALL), lib.tensor(g))))[1]
    return y.detach().numpy(), dx.detach().numpy(), ddx.numpy(), tangent.numpy()


HALF_SMALL = HALF[np.abs(HALF) < 8]   # where x², x³ and their derivatives stay finite


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,fn", [
    ("mul", lambda t, x: x * 0.1 * x), ("div", lambda t, x: x / 0.3 * x), ("pow", lambda t, x: x ** 2.5),
    ("pow 3", lambda t, x: x ** 3), ("add alpha", lambda t, x: t.add(x, x * x, alpha=0.3)),
    ("rsub alpha", lambda t, x: t.rsub(x * x, 0.7, alpha=0.3)), ("number ** x", lambda t, x: 1.3 ** x)],
    ids=lambda c: c if isinstance(c, str) else "")
def test_half_precision_with_a_number_has_torchs_bits_in_higher_order_and_forward_mode(name, fn):
    """Under create_graph the VJPs run as ops on Tensors, and forward mode maps tangents: the numbers
    are read there as in the forward."""
    g = np.random.default_rng(1).standard_normal(HALF_SMALL.size).astype(np.float16)
    for ours, theirs in zip(_half_higher_order(gradviz, fn, g), _half_higher_order(torch, fn, g)):
        assert ours.dtype == np.float16 and not _half_differ(ours, theirs).any(), name
