"""The functions added beyond the core set: gradients against finite differences, and values,
dtypes, gradients and grad_fn names against PyTorch."""
import numpy as np
import pytest

import gradviz
from gradviz.autograd import gradcheck

RNG = np.random.default_rng(7)


def arr(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape)


POS = dict(lo=0.2, hi=0.9)     # inside (0, 1): logs, asin, acos, logit
IDX_ROWS = np.array([[0], [2], [1]])
IDX3 = np.array([0, 2])
MASK = np.array([[True, False, True], [False, True, True], [True, True, False]])

# name -> (fn(lib, *tensors), input arrays for each shape tried)
CASES = {
    "square": (lambda t, x: t.square(x), [(arr(3),), (arr(2, 3),)]),
    "log2": (lambda t, x: t.log2(x), [(arr(3, **POS),), (arr(2, 3, **POS),)]),
    "log10": (lambda t, x: x.log10(), [(arr(3, **POS),), (arr(2, 2, **POS),)]),
    "exp2": (lambda t, x: t.exp2(x), [(arr(3),), (arr(2, 3),)]),
    "expm1": (lambda t, x: x.expm1(), [(arr(3),), (arr(2, 3),)]),
    "sinh": (lambda t, x: t.sinh(x), [(arr(3),), (arr(2, 3),)]),
    "cosh": (lambda t, x: t.cosh(x), [(arr(3),), (arr(2, 3),)]),
    "asin": (lambda t, x: t.asin(x), [(arr(3, **POS),), (arr(2, 3, lo=-0.8, hi=0.8),)]),
    "acos": (lambda t, x: x.acos(), [(arr(3, **POS),), (arr(2, 3, lo=-0.8, hi=0.8),)]),
    "atan": (lambda t, x: t.atan(x), [(arr(3),), (arr(2, 3),)]),
    "atan2": (lambda t, x, y: t.atan2(x, y), [(arr(3), arr(3)), (arr(2, 3), arr(3))]),
    "lerp": (lambda t, x, y: t.lerp(x, y, 0.3), [(arr(3), arr(3)), (arr(2, 3), arr(3))]),
    "lerp_tensor": (lambda t, x, y, w: x.lerp(y, w), [(arr(3), arr(3), arr(3)), (arr(2, 3), arr(2, 3), arr(3))]),
    "addcmul": (lambda t, x, y, z: t.addcmul(x, y, z, value=0.5), [(arr(3), arr(3), arr(3)),
                                                                   (arr(2, 3), arr(3), arr(2, 1))]),
    "addcdiv": (lambda t, x, y, z: x.addcdiv(y, z, value=2), [(arr(3), arr(3), arr(3, **POS)),
                                                              (arr(2, 3), arr(2, 3), arr(3, **POS))]),
    "hypot": (lambda t, x, y: t.hypot(x, y), [(arr(3), arr(3)), (arr(2, 3), arr(2, 3))]),
    "nan_to_num": (lambda t, x: t.nan_to_num(x, posinf=5.0), [(arr(3),), (arr(2, 3),)]),
    "logit": (lambda t, x: t.logit(x), [(arr(3, **POS),), (arr(2, 3, **POS),)]),
    "logit_eps": (lambda t, x: x.logit(eps=0.3), [(arr(4, lo=0.05, hi=0.95),), (arr(2, 3, lo=0.05, hi=0.95),)]),
    "sgn": (lambda t, x: t.sgn(x) + x, [(arr(3),), (arr(2, 3),)]),
    "negative": (lambda t, x: t.negative(x), [(arr(3),), (arr(2, 3),)]),
    "true_divide": (lambda t, x, y: t.true_divide(x, y), [(arr(3), arr(3, **POS)), (arr(2, 3), arr(3, **POS))]),
    "fmod": (lambda t, x, y: t.fmod(x, y), [(arr(3, lo=1, hi=3), arr(3, lo=0.3, hi=0.7)),
                                            (arr(2, 3, lo=-3, hi=-1), arr(3, lo=0.3, hi=0.7))]),
    "fmod_scalar": (lambda t, x: x.fmod(0.7), [(arr(3, lo=0.1, hi=0.6),), (arr(2, 3, lo=0.1, hi=0.6),)]),
    "float_power": (lambda t, x: t.float_power(x, 3), [(arr(3),), (arr(2, 3),)]),
    "float_power_tensor": (lambda t, x, y: t.float_power(x, y), [(arr(3, **POS), arr(3)), (arr(2, 3, **POS), arr(3))]),
    "cumprod": (lambda t, x: t.cumprod(x, 1), [(arr(2, 4),), (arr(3, 3),)]),
    "cumprod_zeros": (lambda t, x: (x * t.tensor([1.0, 0.0, 1.0, 0.0], dtype=t.float64)).cumprod(-1),
                      [(arr(4),), (arr(2, 4),)]),
    "median": (lambda t, x: t.median(x), [(arr(5),), (arr(2, 3),)]),
    "median_dim": (lambda t, x: x.median(dim=0)[0], [(arr(3, 2),), (arr(4, 3),)]),
    "std_mean": (lambda t, x: t.std_mean(x, 1), [(arr(2, 3),), (arr(3, 4),)]),
    "var_mean": (lambda t, x: t.var_mean(x), [(arr(4),), (arr(2, 3),)]),
    "aminmax": (lambda t, x: t.aminmax(x), [(arr(4),), (arr(2, 3),)]),
    "aminmax_dim": (lambda t, x: x.aminmax(dim=1), [(arr(2, 3),), (arr(3, 4),)]),
    "dist": (lambda t, x, y: t.dist(x, y), [(arr(3), arr(3)), (arr(2, 3), arr(3))]),
    "dist_p3": (lambda t, x, y: x.dist(y, 3), [(arr(3), arr(3)), (arr(2, 3), arr(2, 3))]),
    "logcumsumexp": (lambda t, x: t.logcumsumexp(x, 0), [(arr(4),), (arr(3, 2),)]),
    "diff": (lambda t, x: t.diff(x), [(arr(4),), (arr(2, 4),)]),
    "diff_n2": (lambda t, x: x.diff(n=2, dim=0), [(arr(4),), (arr(4, 2),)]),
    "tril": (lambda t, x: t.tril(x), [(arr(3, 3),), (arr(2, 3, 4),)]),
    "triu": (lambda t, x: x.triu(1), [(arr(3, 3),), (arr(3, 4),)]),
    "diag_vector": (lambda t, x: t.diag(x, 1), [(arr(3),), (arr(2),)]),
    "diag_matrix": (lambda t, x: t.diag(x), [(arr(3, 3),), (arr(2, 4),)]),
    "diag_matrix_offset": (lambda t, x: x.diag(-1), [(arr(3, 3),), (arr(4, 2),)]),
    "diag_embed": (lambda t, x: t.diag_embed(x), [(arr(3),), (arr(2, 3),)]),
    "broadcast_to": (lambda t, x: t.broadcast_to(x, (2, 3)), [(arr(3),), (arr(2, 1),)]),
    "broadcast_tensors": (lambda t, x, y: t.broadcast_tensors(x, y), [(arr(3), arr(2, 3)), (arr(2, 1), arr(3))]),
    "movedim": (lambda t, x: t.movedim(x, 0, 2), [(arr(2, 3, 4),), (arr(1, 2, 3),)]),
    "moveaxis": (lambda t, x: t.moveaxis(x, (0, 1), (2, 0)), [(arr(2, 3, 4),), (arr(3, 1, 2),)]),
    "swapaxes": (lambda t, x: t.swapaxes(x, 0, 1), [(arr(2, 3),), (arr(2, 3, 4),)]),
    "swapdims": (lambda t, x: t.swapdims(x, 0, -1), [(arr(2, 3),), (arr(2, 3, 4),)]),
    "narrow": (lambda t, x: t.narrow(x, 0, 1, 2), [(arr(3),), (arr(3, 2),)]),
    "select": (lambda t, x: t.select(x, -1, 1), [(arr(3),), (arr(2, 3),)]),
    "take_along_dim": (lambda t, x: t.take_along_dim(x, t.tensor(IDX_ROWS), 1), [(arr(3, 3),), (arr(3, 4),)]),
    "take_along_dim_flat": (lambda t, x: x.take_along_dim(t.tensor(IDX3)), [(arr(3),), (arr(2, 3),)]),
    "masked_select": (lambda t, x: t.masked_select(x, t.tensor(MASK)), [(arr(3, 3),), (arr(3),)]),
    "roll": (lambda t, x: t.roll(x, 1, 0), [(arr(3),), (arr(3, 2),)]),
    "roll_flat": (lambda t, x: x.roll(2), [(arr(3),), (arr(2, 3),)]),
    "roll_dims": (lambda t, x: t.roll(x, (1, -1), (0, 1)), [(arr(2, 3),), (arr(3, 3),)]),
    "tile": (lambda t, x: t.tile(x, (2,)), [(arr(3),), (arr(2, 3),)]),
    "ravel": (lambda t, x: t.ravel(x), [(arr(2, 3),), (arr(3, 2),)]),
    "ravel_transposed": (lambda t, x: t.ravel(x.t()), [(arr(2, 3),), (arr(3, 2),)]),
    "atleast_1d": (lambda t, x: t.atleast_1d(x.sum()), [(arr(3),), (arr(2, 3),)]),
    "meshgrid_ij": (lambda t, x, y: t.meshgrid(x, y, indexing="ij"), [(arr(3), arr(2)), (arr(2), arr(4))]),
    "meshgrid_xy": (lambda t, x, y: t.meshgrid(x, y, indexing="xy"), [(arr(3), arr(2)), (arr(2), arr(4))]),
    "index_add": (lambda t, x, y: t.index_add(x, 0, t.tensor(IDX3), y, alpha=2), [(arr(3, 2), arr(2, 2)),
                                                                                 (arr(3), arr(2))]),
    "index_fill": (lambda t, x: x.index_fill(1, t.tensor([0, 2]), -1.0), [(arr(2, 3),), (arr(3, 3),)]),
    # the first shapes are the ones compared with PyTorch, whose backward rejects a src larger than index
    "scatter_src": (lambda t, x, y: t.scatter(x, 1, t.tensor(IDX_ROWS), y), [(arr(3, 4), arr(3, 1)),
                                                                            (arr(3, 3), arr(3, 2))]),
    "scatter_value": (lambda t, x: x.scatter(1, t.tensor(IDX_ROWS), 2.0), [(arr(3, 3),), (arr(3, 4),)]),
    "clip": (lambda t, x: t.clip(x, -0.5, 0.5), [(arr(3),), (arr(2, 3),)]),
    "einsum_matmul": (lambda t, x, y: t.einsum("ij,jk->ik", x, y), [(arr(2, 3), arr(3, 4)), (arr(1, 2), arr(2, 2))]),
    "einsum_batch": (lambda t, x, y: t.einsum("bij,bjk->bik", x, y), [(arr(2, 2, 3), arr(2, 3, 2)),
                                                                     (arr(1, 2, 2), arr(1, 2, 3))]),
    "einsum_trace": (lambda t, x: t.einsum("ii", x), [(arr(3, 3),), (arr(2, 2),)]),
    "einsum_transpose": (lambda t, x: t.einsum("ij->ji", x), [(arr(2, 3),), (arr(3, 1),)]),
    "einsum_outer": (lambda t, x, y: t.einsum("i,j->ij", x, y), [(arr(3), arr(2)), (arr(2), arr(4))]),
    "einsum_sum": (lambda t, x: t.einsum("ij->", x), [(arr(2, 3),), (arr(3, 1),)]),
    "einsum_rowsum": (lambda t, x: t.einsum("ij->i", x), [(arr(2, 3),), (arr(3, 1),)]),
    "einsum_dot": (lambda t, x, y: t.einsum("i,i->", x, y), [(arr(3), arr(3)), (arr(2), arr(2))]),
    "einsum_implicit": (lambda t, x, y: t.einsum("ij,jk", x, y), [(arr(2, 3), arr(3, 2)), (arr(1, 2), arr(2, 2))]),
    "tensordot": (lambda t, x, y: t.tensordot(x, y, 1), [(arr(2, 3), arr(3, 2)), (arr(3), arr(3, 2))]),
    "tensordot_dims": (lambda t, x, y: t.tensordot(x, y, ([1, 2], [0, 1])), [(arr(2, 3, 2), arr(3, 2)),
                                                                            (arr(1, 2, 3), arr(2, 3, 2))]),
    "kron": (lambda t, x, y: t.kron(x, y), [(arr(2, 2), arr(2, 3)), (arr(2), arr(3))]),
    "addmv": (lambda t, b, m, v: t.addmv(b, m, v, beta=0.5, alpha=2), [(arr(2), arr(2, 3), arr(3)),
                                                                       (arr(1), arr(3, 2), arr(2))]),
    "baddbmm": (lambda t, b, x, y: t.baddbmm(b, x, y), [(arr(2, 2, 2), arr(2, 2, 3), arr(2, 3, 2)),
                                                        (arr(2, 1), arr(3, 2, 2), arr(3, 2, 1))]),
}

# grad_fn names that differ from PyTorch on purpose (see the einsum docstring)
OWN_GRAPH = {"einsum_matmul", "einsum_batch", "einsum_dot", "einsum_implicit"}


def _outputs(out):
    return tuple(out) if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("name,shape", [(n, i) for n in CASES for i in range(2)])
def test_gradcheck(name, shape):
    fn, shapes = CASES[name]
    inputs = tuple(gradviz.tensor(a, dtype=gradviz.float64, requires_grad=True) for a in shapes[shape])
    assert gradcheck(lambda *xs: fn(gradviz, *xs), inputs)


def _graph_names(node):
    """The grad_fn names reachable from node, in a fixed order (depth first)."""
    names, stack, seen = [], [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if n.name() != "torch::autograd::AccumulateGrad":
            names.append(n.name())
        stack.extend(f for f, _ in n.next_functions)
    return sorted(names)


def _run(lib, name, arrays, dtype):
    fn, _ = CASES[name]
    xs = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    outs = _outputs(fn(lib, *xs))
    total = 0
    for i, o in enumerate(outs):
        w = lib.tensor(np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)), dtype=o.dtype)
        total = total + (o * w * (i + 1)).sum()
    total.backward()
    return ([o.detach().numpy() for o in outs], [str(o.dtype) for o in outs],
            [x.grad.numpy() if x.grad is not None else None for x in xs],
            [_graph_names(o.grad_fn) if o.grad_fn is not None else [] for o in outs])


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name, dtype):
    real = pytest.importorskip("torch")
    arrays = CASES[name][1][0]
    ours = _run(gradviz, name, arrays, getattr(gradviz, dtype))
    theirs = _run(real, name, arrays, getattr(real, dtype))
    tol = 1e-12 if dtype == "float64" else 1e-5
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert ours[1] == theirs[1]
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10)
    if name not in OWN_GRAPH:
        assert ours[3] == theirs[3]


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
    real = pytest.importorskip("torch")
    ours = NO_GRAD[name](gradviz, gradviz.tensor(SPECIAL))
    theirs = NO_GRAD[name](real, real.tensor(SPECIAL))
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


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
