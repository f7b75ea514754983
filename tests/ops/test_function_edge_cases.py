"""Functions at their edges: NaN, inf and zero inputs of the no-gradient functions, zero gradients of
the step functions, inf and NaN gradients where the select kernels (relu, hardtanh, ...) mask them,
cumprod through zeros to second order, the dtypes and shapes of random creation, atan2 at the origin,
and std/var with no degrees of freedom, each against PyTorch. Their rows of gradients live in
tests/ops/cases.py (group "function")."""
import numpy as np
import pytest
from tests.support.parity import assert_matches_torch

import gradviz

SPECIAL = np.array([[float("nan"), float("inf"), -1.5], [-float("inf"), 0.0, 2.5]])
NO_GRAD = {
    "ceil": lambda t, x: t.ceil(x),
    "trunc": lambda t, x: x.trunc(),
    "isnan": lambda t, x: t.isnan(x),
    "isinf": lambda t, x: x.isinf(),
    "isfinite": lambda t, x: t.isfinite(x),
    "nan_to_num": lambda t, x: t.nan_to_num(x),
    "nan_to_num_values": lambda t, x: x.nan_to_num(nan=1.0, posinf=2.0, neginf=-2.0),
    "all": lambda t, x: t.all(x),
    "all_dim": lambda t, x: x.all(dim=1),
    "any_dim": lambda t, x: t.any(x == 0, dim=0, keepdim=True),
    "any_int": lambda t, x: (x == 0).long().any(),
    "count_nonzero": lambda t, x: t.count_nonzero(x),
    "count_nonzero_dim": lambda t, x: x.count_nonzero(dim=1),
    "nonzero": lambda t, x: t.nonzero(x == x),
    "nonzero_method": lambda t, x: (x > 0).nonzero(),
    "positive": lambda t, x: t.positive(x),
    "square_int": lambda t, x: t.square(t.tensor([1, -2, 3])),
    "log2_int": lambda t, x: t.log2(t.tensor([1, 2, 8])),
    "float_power_int": lambda t, x: t.float_power(t.tensor([1, 2, 3]), 2),
    "cumprod_int": lambda t, x: t.cumprod(t.tensor([1, 2, 3]), 0),
    "median_even": lambda t, x: t.median(t.tensor([4.0, 1.0, 3.0, 2.0])),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(NO_GRAD))
def test_no_grad_functions_match_torch(name):
    pytest.importorskip("torch")
    assert_matches_torch(lambda t: NO_GRAD[name](t, t.tensor(SPECIAL)), [], rtol=0, atol=0)


def test_step_functions_have_zero_gradients_and_predicates_no_graph():
    x = gradviz.tensor([0.5, -1.5], requires_grad=True)
    for out, name in ((gradviz.ceil(x), "CeilBackward0"), (gradviz.trunc(x), "TruncBackward0"),
                      (x.floor(), "FloorBackward0"), (x.round(), "RoundBackward0")):
        assert out.grad_fn.name() == name          # as torch: a node whose gradient is zero
        (out * 3).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]
        x.grad = None
    for out in (gradviz.isnan(x), x.isfinite()):
        assert not out.requires_grad
    assert gradviz.positive(x) is x
    assert gradviz.clip is gradviz.clamp


# the backward kernels that select (torch's `mask ? grad : 0`): where the mask is off the gradient is +0
# whatever arrived there, inf and NaN included
MASKED = {
    "relu": lambda t, x: x.relu(),
    "threshold": lambda t, x: t.nn.functional.threshold(x, 0.5, -2.0),
    "hardtanh": lambda t, x: t.nn.functional.hardtanh(x),
    "hardshrink": lambda t, x: t.nn.functional.hardshrink(x, 1.0),
    "softshrink": lambda t, x: t.nn.functional.softshrink(x, 1.0),
    "hardsigmoid": lambda t, x: t.nn.functional.hardsigmoid(x),
    "tril": lambda t, x: t.tril(x.reshape(2, 4)).reshape(8),
}


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", list(MASKED))
def test_masked_gradients_of_infinite_and_nan_gradients_match_torch_bit_for_bit(name, dtype):
    real = pytest.importorskip("torch")
    x_values = [-1.0, 0.0, 0.25, 2.0, 0.75, -4.0, 5.0, -0.5]   # (a NaN input: torch's kernels differ by dtype)
    g_values = [float("inf"), float("nan"), -3.0, -1.5, 2.0, -float("inf"), 1.0, -2.0]
    grads = []
    for lib in (gradviz, real):
        x = lib.tensor(x_values, dtype=getattr(lib, dtype), requires_grad=True)
        MASKED[name](lib, x).backward(lib.tensor(g_values, dtype=getattr(lib, dtype)))
        grads.append(x.grad.numpy())
    ours, theirs = grads
    assert ours.dtype == theirs.dtype
    same_bits = ours.view(f"u{ours.itemsize}") == theirs.view(f"u{ours.itemsize}")
    assert (same_bits | (np.isnan(ours) & np.isnan(theirs))).all(), (ours, theirs)


@pytest.mark.torch
def test_cumprod_with_zeros_second_order():
    """The zero-safe VJP is itself differentiable (create_graph=True), as PyTorch's."""
    real = pytest.importorskip("torch")
    results = []
    for lib in (gradviz, real):
        x = lib.tensor([2.0, 0.0, 3.0, 0.0, 1.5], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.0, -2.0, 0.5, 3.0, 1.0], dtype=lib.float64)
        (g,) = lib.autograd.grad((x.cumprod(0) * w).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * w).sum(), x)
        results.append((g.detach().numpy(), h.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
def test_random_creation_matches_torch_dtypes_and_shapes():
    real = pytest.importorskip("torch")
    like = np.zeros((2, 3), dtype=np.float32)
    for lib in (gradviz, real):
        lib.manual_seed(0)
    pairs = [(lambda t: t.randperm(5)), (lambda t: t.randperm(4, dtype=t.int32)),
             (lambda t: t.normal(0.0, 1.0, (2, 3))), (lambda t: t.normal(t.zeros(3), 2.0)),
             (lambda t: t.normal(t.zeros(2, 1, dtype=t.float64), t.ones(3, dtype=t.float64))),
             (lambda t: t.bernoulli(t.full((2, 3), 0.5))), (lambda t: t.tensor(like).bernoulli(1.0)),
             (lambda t: t.randint_like(t.tensor(like), 5)), (lambda t: t.randint_like(t.tensor([1, 2]), 3, 9))]
    for make in pairs:
        ours, theirs = make(gradviz), make(real)
        assert ours.dtype == getattr(gradviz, str(theirs.dtype).split(".")[1])
        assert tuple(ours.shape) == tuple(theirs.shape)
    assert sorted(gradviz.randperm(6).tolist()) == list(range(6))
    assert set(gradviz.bernoulli(gradviz.full((50,), 0.5)).tolist()) <= {0.0, 1.0}
    assert gradviz.tensor(like).bernoulli(1.0).tolist() == [[1.0] * 3] * 2
    draws = gradviz.randint_like(gradviz.zeros(100), 3, 9)
    assert 3 <= draws.min().item() and draws.max().item() < 9


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_atan2_gradient_at_the_origin_matches_torch(dtype):
    """PyTorch masks 1/(a² + b²) where a² + b² is 0 (the origin, or a sum that underflowed), so atan2(0, 0)
    passes back 0 with PyTorch's signed zeros, not 0/0; a subnormal sum still gives inf, and inf inputs nan."""
    real = pytest.importorskip("torch")
    inf = float("inf")
    a = [0.0, -0.0, 0.0, -0.0, 0.0, 1e-30, 3e-20, 3.0, inf, 1.0, 1e30]
    b = [0.0, 0.0, -0.0, -0.0, 0.0, 1e-30, 0.0, 4.0, 1.0, inf, 1e30]
    g = [1.0, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0]
    results = []
    for lib in (gradviz, real):
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.atan2(x, y)
        out.backward(lib.tensor(g, dtype=getattr(lib, dtype)))
        assert out.grad_fn.name() == "Atan2Backward0"
        results.append((x.grad.numpy(), y.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))
    x = gradviz.tensor([0.0], requires_grad=True)
    x.atan2(gradviz.tensor([0.0])).backward()
    assert x.grad.tolist() == [0.0]


NO_DEGREES_OF_FREEDOM = """
print(torch.tensor([1.]).std(), torch.tensor([1.]).var(), torch.std(torch.tensor([1.])), torch.ones(3, 1).var(1))
print(torch.tensor([1.]).var(correction=0), torch.ones(3, 1).var(0), torch.ones(2, 3).std((0, 1), correction=5.5))
print(torch.std_mean(torch.tensor([1.])), torch.var_mean(torch.tensor([1.]), correction=2))
print(torch.ones(0, 3).var(1), torch.ones(3, 0).var(1), torch.tensor(2.5).var())
for correction, values, dim in [(1, [1.], None), (1, [1.], 0), (2, [1., 2.], 0), (3, [1., 2.], 0), (2, [1., 1.], None)]:
    for fn in (torch.var, torch.std):
        x = torch.tensor(values, requires_grad=True)
        (fn(x, correction=correction) if dim is None else fn(x, dim, correction=correction)).backward()
        print(x.grad)
x = torch.tensor([[float('-inf'), float('-inf')], [0., 1.], [float('inf'), 1.]], requires_grad=True)
y = torch.logsumexp(x, 1)
y.backward(torch.ones(3))
print(y, x.grad)
"""


@pytest.mark.torch
def test_no_degrees_of_freedom_warns_as_torch_and_logsumexp_of_minus_inf_is_silent():
    """std()/var() with correction ≥ n warn PyTorch's UserWarning (not NumPy's RuntimeWarning) and their
    gradients are PyTorch's nan/inf (no ZeroDivisionError); logsumexp's VJP on a row of −inf is nan, unwarned."""
    pytest.importorskip("torch")
    from tests.support.parity import gradviz_output, torch_output
    ours, our_warnings = gradviz_output(NO_DEGREES_OF_FREEDOM)
    theirs, their_warnings = torch_output(NO_DEGREES_OF_FREEDOM)
    assert ours == theirs
    assert our_warnings == their_warnings
    assert our_warnings[0] == ("std(): degrees of freedom is <= 0. Correction should be strictly less than the "
                               "reduction factor (input numel divided by output numel).")
