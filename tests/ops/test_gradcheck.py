"""Every op's VJP against central finite differences, in float64.

Each case is an op (a lambda over gradviz tensors) and the shape and domain of each
input: shapes (), (4,), (3, 4), (1, 4) for every op, broadcast pairs for binary ops,
and the dims/keepdim/correction variants of the reductions. Domains keep inputs where
the op is smooth: log/sqrt on positives, abs/relu/sign away from 0, max/min on distinct
values. A second table checks second derivatives (create_graph=True) against finite
differences of the first gradient.
"""
import warnings

import numpy as np
import pytest
from tests.support.op_inputs import PAIRS, SHAPES, rng_for, sample

import gradviz as torch
from gradviz.autograd import grad, gradcheck


R = "real"


def leaf(spec, rng):
    """A float64 leaf from (shape, domain), or from a fixed array."""
    return torch.tensor(sample(spec, rng), dtype=torch.float64, requires_grad=True)


def check(fn, specs, seed_text="", **kw):
    rng = rng_for(seed_text)
    xs = tuple(leaf(s, rng) for s in specs)
    out = fn(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    # gradcheck skips outputs that do not require grad, so make sure the op recorded a node
    assert all(o.requires_grad and o.grad_fn is not None for o in outs), "op did not record a grad_fn"
    assert all(o.dtype == torch.float64 for o in outs)
    assert gradcheck(fn, xs, **kw)


def cases(table):
    return [pytest.param(fn, specs, id=name) for name, fn, specs in table]


def test_gradcheck_catches_a_wrong_vjp():
    """The harness itself: a rule that is off by a factor fails, with the numbers shown."""
    from gradviz.autograd.apply import apply
    from gradviz.ops.op import Op
    wrong = Op("twice", "TwiceBackward0", "c = 2a", lambda xp, a: a * 2, vjp=(lambda xp, g, c, a: g * 3,))
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda a: apply(wrong, (a,)), (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError, match=r"numerical:tensor\(\[\[2\.0000, 0\.0000\],\n +\[0\.0000, 2\.0000\]\], "
                                           r"dtype=torch\.float64\)\nanalytical:tensor\(\[\[3\., 0\.\],"):
        gradcheck(lambda a: apply(wrong, (a,)), (x,))


def test_gradcheck_on_non_contiguous_and_aliased_inputs():
    """Finite differences perturb a transposed leaf in place, and outputs that are views of it."""
    x = torch.tensor(np.arange(12.0).reshape(4, 3), dtype=torch.float64).T.detach().requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda a: a * a, (x,))
    assert gradcheck(lambda a: a.diagonal() * 1, (x,)) and gradcheck(lambda a: a[1:], (x,))


# -- elementwise, one input ----------------------------------------------------------------
UNARY_OPS = [
    ("neg", lambda a: -a, "real"),
    ("neg_fn", torch.neg, "real"),
    ("abs", torch.abs, "away"),
    ("abs_builtin", lambda a: abs(a), "away"),
    ("exp", torch.exp, "real"),
    ("log", torch.log, "pos"),
    ("log1p", torch.log1p, "gt-1"),
    ("sqrt", torch.sqrt, "pos"),
    ("rsqrt", torch.rsqrt, "pos"),
    ("sin", torch.sin, "real"),
    ("cos", torch.cos, "real"),
    ("tan", torch.tan, "unit"),
    ("tanh", torch.tanh, "real"),
    ("sigmoid", torch.sigmoid, "real"),
    ("relu", torch.relu, "away"),
    ("leaky_relu", lambda a: torch.nn.functional.leaky_relu(a), "away"),
    ("leaky_relu_0.2", lambda a: torch.nn.functional.leaky_relu(a, 0.2), "away"),
    ("gelu", lambda a: torch.nn.functional.gelu(a), "real"),
    ("gelu_tanh", lambda a: torch.nn.functional.gelu(a, approximate="tanh"), "real"),
    ("softplus", lambda a: torch.nn.functional.softplus(a), "real"),
    ("softplus_beta2_threshold1", lambda a: torch.nn.functional.softplus(a, beta=2.0, threshold=1.0), "real"),
    ("erf", torch.erf, "real"),
    ("clamp", lambda a: torch.clamp(a, -0.5, 0.5), "real"),
    ("clamp_min", lambda a: a.clamp(min=-0.3), "real"),
    ("clamp_max", lambda a: a.clamp(max=0.3), "real"),
    ("clip", lambda a: a.clip(-1.0, 0.2), "real"),
    ("sign", torch.sign, "away"),
    ("reciprocal", torch.reciprocal, "away"),
    ("pow_2", lambda a: a ** 2, "real"),
    ("pow_3", lambda a: a.pow(3), "real"),
    ("pow_int_0", lambda a: a ** 0, "real"),
    ("pow_1", lambda a: a ** 1, "real"),
    ("pow_0.5", lambda a: a ** 0.5, "pos"),
    ("pow_-1.5", lambda a: torch.pow(a, -1.5), "pos"),
    ("pow_-2", lambda a: a ** -2, "away"),
    ("rpow_2", lambda a: 2 ** a, "real"),
    ("rpow_0.5", lambda a: 0.5 ** a, "real"),
    ("rpow_fn", lambda a: torch.pow(3.0, a), "real"),
    ("add_scalar", lambda a: a + 2.5, "real"),
    ("radd_scalar", lambda a: 2.5 + a, "real"),
    ("sub_scalar", lambda a: a - 2.5, "real"),
    ("rsub_scalar", lambda a: 2.5 - a, "real"),
    ("rsub_int", lambda a: 1 - a, "real"),
    ("mul_scalar", lambda a: a * 2.5, "real"),
    ("rmul_scalar", lambda a: -1.5 * a, "real"),
    ("div_scalar", lambda a: a / 2.5, "real"),
    ("rdiv_scalar", lambda a: 2.5 / a, "away"),
    ("add_alpha", lambda a: a.add(a, alpha=2), "real"),
    ("square_by_mul", lambda a: a * a, "real"),
    ("x_over_x", lambda a: a / a.exp(), "real"),
    ("where_self", lambda a: torch.where(a > 0, a, a * a), "away"),
    ("where_scalar_other", lambda a: torch.where(a > 0, a, 0.0), "away"),
    ("where_scalar_self", lambda a: torch.where(a > 0, 1.0, a), "away"),
    ("masked_fill", lambda a: a.masked_fill(a < 0, 2.0), "away"),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn, domain", [pytest.param(f, d, id=n) for n, f, d in UNARY_OPS])
def test_unary(fn, domain, shape):
    check(fn, [(shape, domain)], f"{domain}{shape}")


# -- elementwise, two inputs (same shapes and broadcast pairs) -------------------------------
BINARY_OPS = [
    ("add", lambda a, b: a + b, "real", "real"),
    ("add_fn_alpha", lambda a, b: torch.add(a, b, alpha=-2), "real", "real"),
    ("sub", lambda a, b: a - b, "real", "real"),
    ("sub_alpha", lambda a, b: a.sub(b, alpha=0.5), "real", "real"),
    ("mul", lambda a, b: a * b, "real", "real"),
    ("div", lambda a, b: a / b, "real", "away"),
    ("pow", lambda a, b: a ** b, "pos", "real"),
    ("pow_fn", lambda a, b: torch.pow(a, b), "pos", "real"),
    ("maximum", torch.maximum, "distinct", "distinct"),
    ("minimum", torch.minimum, "distinct", "distinct"),
    ("max_other", lambda a, b: torch.max(a, b), "distinct", "distinct"),
    ("min_other", lambda a, b: torch.min(a, b), "distinct", "distinct"),
    ("where", lambda a, b: torch.where((a + b) > 0, a, b), "away", "away"),
    ("clamp_tensor_bounds", lambda a, b: torch.clamp(a, min=b, max=b + 1), "real", "real"),
    ("clamp_tensor_max", lambda a, b: a.clamp(max=b), "real", "real"),
    ("where_fixed_cond", lambda a, b: torch.where(torch.tensor([True, False, False, True]), a, b), "real", "real"),
    ("composite", lambda a, b: (a * b).sin() / (b * b + 1), "real", "real"),
]


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("fn, da, db", [pytest.param(f, a, b, id=n) for n, f, a, b in BINARY_OPS])
def test_binary(fn, da, db, shapes):
    sa, sb = shapes
    if fn is dict((n, f) for n, f, *_ in BINARY_OPS)["where_fixed_cond"]:   # the condition is (4,)
        try:
            np.broadcast_shapes(sa, sb, (4,))
        except ValueError:
            pytest.skip("condition (4,) does not broadcast with these shapes")
    check(fn, [(sa, da), (sb, db)], f"{sa}{sb}")


def test_pow_at_zero_base():
    """d(aᵇ)/db at a = 0 is 0 for b > 0 (PyTorch masks the log(0)), and d/da of a⁰ is 0."""
    a = torch.tensor([0.0, 0.0, 1.5], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([2.0, 0.0, 0.5], dtype=torch.float64, requires_grad=True)
    (a ** b).sum().backward()
    assert np.allclose(a.grad.numpy(), [0.0, 0.0, 0.5 * 1.5 ** -0.5])
    assert np.allclose(b.grad.numpy(), [0.0, 0.0, 1.5 ** 0.5 * np.log(1.5)])
    c = torch.tensor([0.0, 2.0], dtype=torch.float64, requires_grad=True)
    (c ** 0).sum().backward()
    assert c.grad.tolist() == [0.0, 0.0]
    d = torch.tensor([0.0, 2.0], dtype=torch.float64, requires_grad=True)
    (d ** 2.0).sum().backward()
    assert d.grad.tolist() == [0.0, 4.0]


def test_ties_split_evenly():
    """maximum/minimum give half of ḡ to each side of a tie; max() shares it among tied maxima."""
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([1.0, 5.0, 0.0], dtype=torch.float64, requires_grad=True)
    torch.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 1.0] and b.grad.tolist() == [0.5, 1.0, 0.0]
    x = torch.tensor([3.0, 1.0, 3.0, 3.0], dtype=torch.float64, requires_grad=True)
    x.max().backward()
    assert np.allclose(x.grad.numpy(), [1 / 3, 0, 1 / 3, 1 / 3])
    y = torch.tensor([[3.0, 1.0, 3.0]], dtype=torch.float64, requires_grad=True)
    y.amax(1).sum().backward()
    assert np.allclose(y.grad.numpy(), [[0.5, 0, 0.5]])


def test_kinks_use_pytorch_subgradients():
    """relu'(0) = 0, abs'(0) = 0, clamp passes ḡ at the bounds, sign' = 0."""
    x = torch.tensor([0.0, -1.0, 1.0], dtype=torch.float64, requires_grad=True)
    torch.relu(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
    x.grad = None
    torch.abs(x).sum().backward()
    assert x.grad.tolist() == [0.0, -1.0, 1.0]
    x.grad = None
    torch.clamp(x, -1.0, 0.0).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0]
    x.grad = None
    torch.sign(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


# -- reductions ----------------------------------------------------------------------------
def _reduction_cases():
    table = []
    for shape in SHAPES + [(2, 3, 4)]:
        nd = len(shape)
        dims = [None] + list(range(-1, nd)) if nd else [None, 0, -1]
        if nd >= 2:
            dims += [(0, 1), (-1, 0)]
        if nd == 3:
            dims += [(0, 2)]
        for dim in dims:
            for keep in (False, True):
                if dim is None and keep:
                    continue
                kw = {} if dim is None else {"dim": dim, "keepdim": keep}
                tag = f"{shape}-dim={dim}-keep={keep}"
                table += [
                    (f"sum-{tag}", lambda a, kw=kw: a.sum(**kw), [(shape, "real")]),
                    (f"mean-{tag}", lambda a, kw=kw: a.mean(**kw), [(shape, "real")]),
                    (f"amax-{tag}", lambda a, kw=kw: a.amax(**kw),
                     [(shape, "distinct")]),
                    (f"amin-{tag}", lambda a, kw=kw: torch.amin(a, **kw) if kw else a.amin(), [(shape, "distinct")]),
                    (f"logsumexp-{tag}", lambda a, kw=kw: torch.logsumexp(a, kw.get("dim", tuple(range(a.ndim))),
                                                                          kw.get("keepdim", False)),
                     [(shape, "real")]),
                ]
                n = int(np.prod([shape[d] for d in ((dim,) if isinstance(dim, int) else dim)])) \
                    if dim is not None and nd else int(np.prod(shape, dtype=int))
                for corr in (0, 1, 2):
                    if n - corr <= 0:
                        continue   # nan (n ≤ correction), as in PyTorch
                    table.append((f"var-c{corr}-{tag}", lambda a, kw=kw, c=corr: a.var(correction=c, **kw),
                                  [(shape, "real")]))
                    if n > 1:   # std of one element is 0: not differentiable there
                        table.append((f"std-c{corr}-{tag}", lambda a, kw=kw, c=corr: a.std(correction=c, **kw),
                                      [(shape, "real")]))
                if n > 1:
                    table.append((f"var-unbiased-false-{tag}", lambda a, kw=kw: torch.var(a, unbiased=False, **kw),
                                  [(shape, "real")]))
                    table.append((f"std-unbiased-{tag}", lambda a, kw=kw: torch.std(a, unbiased=True, **kw),
                                  [(shape, "real")]))
                for p in (1, 2, 3, float("inf"), "fro"):
                    if p == "fro" and dim is not None and isinstance(dim, int):
                        continue
                    domain = "distinct" if p == float("inf") else "away"
                    table.append((f"norm-p{p}-{tag}", lambda a, kw=kw, p=p: a.norm(p=p, **kw), [(shape, domain)]))
                if dim is None or isinstance(dim, int):
                    if dim is None:
                        table.append((f"prod-{tag}", lambda a: a.prod(), [(shape, "real")]))
                        table.append((f"max-{tag}", lambda a: a.max(), [(shape, "distinct")]))
                        table.append((f"min-{tag}", lambda a: torch.min(a), [(shape, "distinct")]))
                    else:
                        table += [
                            (f"prod-{tag}", lambda a, kw=kw: a.prod(**kw), [(shape, "real")]),
                            (f"max-{tag}", lambda a, kw=kw: a.max(**kw).values, [(shape, "distinct")]),
                            (f"min-{tag}", lambda a, kw=kw: torch.min(a, **kw)[0], [(shape, "distinct")]),
                            (f"softmax-{tag}", lambda a, d=dim: torch.softmax(a, d), [(shape, "real")]),
                            (f"log_softmax-{tag}", lambda a, d=dim: a.log_softmax(d), [(shape, "real")]),
                            (f"cumsum-{tag}", lambda a, d=dim: torch.cumsum(a, d), [(shape, "real")]),
                        ]
    # de-duplicate (keepdim does not change softmax, cumsum)
    seen, out = set(), []
    for name, fn, specs in table:
        key = name.replace("-keep=True", "-keep=False") if name.split("-")[0] in (
            "softmax", "log_softmax", "cumsum") else name
        if key not in seen:
            seen.add(key)
            out.append((name, fn, specs))
    return out


@pytest.mark.parametrize("fn, specs", cases(_reduction_cases()))
def test_reduction(fn, specs):
    check(fn, specs, str(specs))


PROD_WITH_ZEROS = [
    np.array([2.0, 0.0, 3.0, -1.5]),
    np.array([0.0, 0.0, 3.0, -1.5]),
    np.array([[1.5, 0.0, 2.0, 3.0], [0.0, 0.0, 1.0, 2.0], [1.0, 2.0, -1.0, 0.5]]),
    np.array(0.0),
]


@pytest.mark.parametrize("data", PROD_WITH_ZEROS, ids=lambda d: f"{d.shape}-zeros={int((d == 0).sum())}")
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_prod_with_zeros(data, dim):
    fn = (lambda a: a.prod()) if dim is None else (lambda a: a.prod(dim))
    check(fn, [data])
    check(lambda a: (a * a).prod() if dim is None else (a * a).prod(dim, keepdim=True), [data])


def test_prod_with_zeros_values():
    x = torch.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0]], dtype=torch.float64, requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == [[0.0] * 3, [0.0] * 3]
    x.grad = None
    x.prod(1).sum().backward()
    assert x.grad.tolist() == [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]]


# -- linear algebra ------------------------------------------------------------------------
MATMUL_SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((1, 4), (4, 1)),
                 ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (4,)),
                 ((4,), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)),
                 ((2, 2, 3, 4), (2, 4, 2)), ((2, 1, 3, 4), (1, 2, 4, 2))]
LINALG = [
    ("mm", torch.mm, [((3, 4), "real"), ((4, 5), "real")]),
    ("mm_outer_shape", torch.mm, [((3, 1), "real"), ((1, 2), "real")]),
    ("bmm", torch.bmm, [((2, 3, 4), "real"), ((2, 4, 5), "real")]),
    ("dot", torch.dot, [((4,), "real"), ((4,), "real")]),
    ("mv", torch.mv, [((3, 4), "real"), ((4,), "real")]),
    ("outer", torch.outer, [((3,), "real"), ((4,), "real")]),
    ("trace", torch.trace, [((3, 4), "real")]),
    ("trace_square", lambda a: a.trace(), [((4, 4), "real")]),
    ("trace_tall", torch.trace, [((4, 2), "real")]),
    ("addmm", torch.addmm, [((5,), "real"), ((3, 4), "real"), ((4, 5), "real")]),
    ("addmm_2d_bias", torch.addmm, [((3, 5), "real"), ((3, 4), "real"), ((4, 5), "real")]),
    ("addmm_col_bias", torch.addmm, [((3, 1), "real"), ((3, 4), "real"), ((4, 5), "real")]),
    ("addmm_scalar_bias", torch.addmm, [((), "real"), ((3, 4), "real"), ((4, 5), "real")]),
    ("addmm_beta_alpha", lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=2.0),
     [((5,), "real"), ((3, 4), "real"), ((4, 5), "real")]),
    ("linear", lambda x, w, b: torch.nn.functional.linear(x, w, b), [((3, 4), R), ((5, 4), R), ((5,), R)]),
    ("linear_nobias", lambda x, w: torch.nn.functional.linear(x, w), [((3, 4), "real"), ((5, 4), "real")]),
    ("linear_3d", lambda x, w, b: torch.nn.functional.linear(x, w, b),
     [((2, 3, 4), "real"), ((5, 4), "real"), ((5,), "real")]),
    ("linear_1d", lambda x, w, b: torch.nn.functional.linear(x, w, b), [((4,), R), ((5, 4), R), ((5,), R)]),
]
for _off in (0, 1, -1, 2, -2, 3):
    LINALG.append((f"diagonal_{_off}", lambda a, o=_off: torch.diagonal(a, o), [((3, 4), "real")]))
LINALG += [
    ("diagonal_3d_dims12", lambda a: a.diagonal(0, 1, 2), [((2, 3, 4), "real")]),
    ("diagonal_3d_dims20_off1", lambda a: torch.diagonal(a, 1, 2, 0), [((2, 3, 4), "real")]),
    ("diagonal_neg_dims", lambda a: torch.diagonal(a, -1, -1, -2), [((2, 3, 4), "real")]),
    ("diagonal_square", lambda a: torch.diagonal(a), [((1, 4), "real")]),
]
for _sa, _sb in MATMUL_SHAPES:
    LINALG.append((f"matmul_{_sa}@{_sb}", lambda a, b: a @ b, [(_sa, "real"), (_sb, "real")]))
    LINALG.append((f"matmul_fn_{_sa}@{_sb}", torch.matmul, [(_sa, "real"), (_sb, "real")]))


@pytest.mark.parametrize("fn, specs", cases(LINALG))
def test_linalg(fn, specs):
    check(fn, specs, str(specs))


@pytest.mark.parametrize("shapes", [((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                                    ((2, 1, 3, 4), (3, 4, 5))], ids=str)
@pytest.mark.parametrize("which", ["left", "right"])
def test_matmul_one_side_requires_grad(shapes, which):
    """matmul takes a different route when only one operand requires grad (as PyTorch's folding does)."""
    rng = np.random.default_rng(1)
    a = torch.tensor(rng.standard_normal(shapes[0]), dtype=torch.float64, requires_grad=which == "left")
    b = torch.tensor(rng.standard_normal(shapes[1]), dtype=torch.float64, requires_grad=which == "right")
    assert gradcheck(lambda a, b: a @ b, (a, b))


# -- shape ops -----------------------------------------------------------------------------


def _reversed_T(a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return a.T


def test_T_of_3d_warns_as_in_torch():
    with pytest.warns(UserWarning, match="x.T` on tensors of dimension other than 2"):
        out = torch.zeros(2, 3, 4).T
    assert out.shape == (4, 3, 2)
SHAPE_OPS = [
    ("reshape_flat", lambda a: a.reshape(-1), [((3, 4), R)]),
    ("reshape_4x3", lambda a: a.reshape(4, 3), [((3, 4), R)]),
    ("reshape_tuple", lambda a: torch.reshape(a, (2, 2, 3)), [((3, 4), R)]),
    ("reshape_scalar_to_1", lambda a: a.reshape(1, 1), [((), R)]),
    ("reshape_to_scalar", lambda a: a.reshape(()), [((1,), R)]),
    ("view", lambda a: a.view(2, -1), [((3, 4), R)]),
    ("view_as", lambda a, b: a.view_as(b), [((3, 4), R), ((12,), R)]),
    ("flatten", torch.flatten, [((2, 3, 4), R)]),
    ("flatten_scalar", lambda a: a.flatten(), [((), R)]),
    ("flatten_1", lambda a: a.flatten(1), [((2, 3, 4), R)]),
    ("flatten_0_1", lambda a: a.flatten(0, 1), [((2, 3, 4), R)]),
    ("squeeze", lambda a: a.squeeze(), [((1, 4), R)]),
    ("squeeze_dim0", lambda a: a.squeeze(0), [((1, 4), R)]),
    ("squeeze_dim_not1", lambda a: a.squeeze(1), [((1, 4), R)]),
    ("squeeze_dims", lambda a: a.squeeze((0, 2)), [((1, 4, 1), R)]),
    ("squeeze_scalar", lambda a: a.squeeze(), [((), R)]),
    ("unsqueeze_0", lambda a: a.unsqueeze(0), [((3, 4), R)]),
    ("unsqueeze_-1", lambda a: torch.unsqueeze(a, -1), [((3, 4), R)]),
    ("unsqueeze_scalar", lambda a: a.unsqueeze(0), [((), R)]),
    ("transpose", lambda a: a.transpose(0, 1), [((3, 4), R)]),
    ("transpose_3d", lambda a: torch.transpose(a, -1, 0), [((2, 3, 4), R)]),
    ("swapaxes", lambda a: a.swapaxes(0, 2), [((2, 3, 4), R)]),
    ("permute", lambda a: a.permute(2, 0, 1), [((2, 3, 4), R)]),
    ("permute_tuple", lambda a: torch.permute(a, (1, 0)), [((3, 4), R)]),
    ("t", lambda a: a.t(), [((3, 4), R)]),
    ("t_1d", torch.t, [((4,), R)]),
    ("T", lambda a: a.T, [((3, 4), R)]),
    ("T_3d", lambda a: _reversed_T(a), [((2, 3, 4), R)]),
    ("mT", lambda a: a.mT, [((2, 3, 4), R)]),
    ("mT_2d", lambda a: a.mT, [((1, 4), R)]),
    ("expand", lambda a: a.expand(3, 4), [((1, 4), R)]),
    ("expand_new_dims", lambda a: a.expand(2, 3, -1), [((1, 4), R)]),
    ("expand_scalar", lambda a: a.expand(3, 2), [((), R)]),
    ("expand_as", lambda a, b: a.expand_as(b) * b, [((4,), R), ((3, 4), R)]),
    ("repeat", lambda a: a.repeat(2, 3), [((3, 4), R)]),
    ("repeat_more_dims", lambda a: a.repeat(2, 1, 2), [((1, 4), R)]),
    ("repeat_scalar", lambda a: a.repeat(3), [((), R)]),
    ("cat_0", lambda a, b: torch.cat([a, b]), [((3, 4), R), ((1, 4), R)]),
    ("cat_1", lambda a, b, c: torch.cat((a, b, c), dim=1), [((3, 4), R), ((3, 1), R), ((3, 2), R)]),
    ("cat_-1_1d", lambda a, b: torch.cat([a, b], -1), [((4,), R), ((2,), R)]),
    ("cat_same", lambda a: torch.cat([a, a * 2, a]), [((4,), R)]),
    ("stack_0", lambda a, b: torch.stack([a, b]), [((3, 4), R), ((3, 4), R)]),
    ("stack_1", lambda a, b: torch.stack([a, b], 1), [((1, 4), R), ((1, 4), R)]),
    ("stack_-1", lambda a, b, c: torch.stack([a, b, c], dim=-1), [((4,), R), ((4,), R), ((4,), R)]),
    ("stack_scalars", lambda a, b: torch.stack([a, b]), [((), R), ((), R)]),
    ("split_2", lambda a: a.split(2), [((3, 4), R)]),
    ("split_sizes", lambda a: torch.split(a, [1, 3], dim=1), [((3, 4), R)]),
    ("split_one_used", lambda a: a.split(2, 1)[1] * 3, [((3, 4), R)]),
    ("chunk", lambda a: a.chunk(2, 1), [((3, 4), R)]),
    ("chunk_uneven", lambda a: torch.chunk(a, 3), [((4,), R)]),
    ("unbind", lambda a: a.unbind(), [((3, 4), R)]),
    ("unbind_1", lambda a: torch.unbind(a, 1), [((1, 4), R)]),
    ("unbind_partial", lambda a: a.unbind(1)[2].exp(), [((3, 4), R)]),
    ("flip", lambda a: a.flip(0), [((3, 4), R)]),
    ("flip_dims", lambda a: torch.flip(a, (0, -1)), [((2, 3, 4), R)]),
    ("flip_scalar", lambda a: a.flip(0), [((4,), R)]),
    ("clone", lambda a: a.clone(), [((3, 4), R)]),
    ("clone_fn", torch.clone, [((), R)]),
    ("to_float64_noop", lambda a: a.double() * a, [((3, 4), R)]),
    ("contiguous", lambda a: a.T.contiguous(), [((3, 4), R)]),
    ("reshape_after_T", lambda a: a.T.reshape(-1), [((3, 4), R)]),
    ("transpose_reshape_matmul", lambda a, b: (a.transpose(0, 1).reshape(4, 3) @ b).sum(0),
     [((3, 4), R), ((3, 2), R)]),
]


@pytest.mark.parametrize("fn, specs", cases(SHAPE_OPS))
def test_shape(fn, specs):
    check(fn, specs, str(specs))


# -- indexing ------------------------------------------------------------------------------
def _setitem(key, value_shape=None, scalar=None):
    """b = f(a); b[key] = v: a CopySlices (or IndexPut) on a non-leaf."""
    if value_shape is None:
        def fn(a):
            b = a * 1.5
            b[key] = scalar
            return b
        return fn

    def fn(a, v):
        b = a.exp() * 1   # exp saves its result: writing into it directly would be an error, as in torch
        b[key] = v
        return b * a
    return fn


IDX = torch.tensor([0, 2, 0, 0])
MASK = np.array([[True, False, True, False], [False, False, False, False], [True, True, False, True]])
INDEXING = [
    ("int", lambda a: a[1], [((3, 4), R)]),
    ("int_neg", lambda a: a[-1], [((3, 4), R)]),
    ("int_int", lambda a: a[1, 2], [((3, 4), R)]),
    ("int_1d", lambda a: a[3], [((4,), R)]),
    ("slice", lambda a: a[1:3], [((3, 4), R)]),
    ("slice_step", lambda a: a[::2], [((3, 4), R)]),
    ("slice_step_both", lambda a: a[1::2, ::3], [((3, 4), R)]),
    ("slice_neg", lambda a: a[-2:], [((4,), R)]),
    ("slice_empty", lambda a: a[2:1].sum() + a.sum(), [((4,), R)]),
    ("slice_full", lambda a: a[:], [((3, 4), R)]),
    ("slice_int", lambda a: a[:, 2], [((3, 4), R)]),
    ("none", lambda a: a[None], [((3, 4), R)]),
    ("none_scalar", lambda a: a[None], [((), R)]),
    ("none_middle", lambda a: a[:, None, 1:], [((3, 4), R)]),
    ("ellipsis", lambda a: a[..., 1], [((2, 3, 4), R)]),
    ("ellipsis_scalar", lambda a: a[...], [((), R)]),
    ("ellipsis_none", lambda a: a[..., None, ::2], [((3, 4), R)]),
    ("tensor_idx_repeats", lambda a: a[IDX], [((3, 4), R)]),
    ("tensor_idx_1d", lambda a: a[torch.tensor([3, 3, 1])], [((4,), R)]),
    ("list_idx_repeats", lambda a: a[[0, 2, 2]], [((3, 4), R)]),
    ("list_idx_dim1", lambda a: a[:, [1, 1, 3]], [((3, 4), R)]),
    ("list_idx_2d", lambda a: a[torch.tensor([[0, 1], [1, 1]])], [((3, 4), R)]),
    ("paired_lists", lambda a: a[[0, 2, 0], [1, 3, 1]], [((3, 4), R)]),
    ("int_and_list", lambda a: a[1, [0, 0, 2]], [((3, 4), R)]),
    ("slice_and_tensor", lambda a: a[1:, IDX], [((3, 4), R)]),
    ("bool_mask", lambda a: a[torch.tensor(MASK)], [((3, 4), R)]),
    ("bool_mask_rows", lambda a: a[torch.tensor([True, False, True])], [((3, 4), R)]),
    ("bool_mask_from_data", lambda a: a[a > 0], [((3, 4), "away")]),
    ("gather_1", lambda a: a.gather(1, torch.tensor([[0, 0], [3, 1], [2, 2]])), [((3, 4), R)]),
    ("gather_0", lambda a: torch.gather(a, 0, torch.tensor([[0, 2, 2, 1], [0, 0, 0, 0]])), [((3, 4), R)]),
    ("gather_1d", lambda a: a.gather(0, torch.tensor([1, 1, 3])), [((4,), R)]),
    ("scatter_add", lambda a, s: a.scatter_add(1, torch.tensor([[0, 0], [3, 1], [2, 2]]), s),
     [((3, 4), R), ((3, 2), R)]),
    ("scatter_add_0_big_src", lambda a, s: torch.scatter_add(a, 0, torch.tensor([[2, 2, 0, 1]]), s),
     [((3, 4), R), ((2, 4), R)]),
    ("index_select_0", lambda a: a.index_select(0, torch.tensor([2, 0, 2])), [((3, 4), R)]),
    ("index_select_1", lambda a: torch.index_select(a, 1, torch.tensor([3, 3])), [((3, 4), R)]),
    ("index_select_1d", lambda a: a.index_select(0, torch.tensor([1])), [((4,), R)]),
    ("setitem_int_scalar", _setitem(0, scalar=5.0), [((3, 4), R)]),
    ("setitem_int_tensor", _setitem(1, (4,)), [((3, 4), R), ((4,), R)]),
    ("setitem_int_broadcast", _setitem(1, ()), [((3, 4), R), ((), R)]),
    ("setitem_slice", _setitem((slice(None), slice(1, 3)), (3, 2)), [((3, 4), R), ((3, 2), R)]),
    ("setitem_step", _setitem(slice(None, None, 2), (1, 4)), [((3, 4), R), ((1, 4), R)]),
    ("setitem_tensor_idx", _setitem(torch.tensor([0, 2]), (4,)), [((3, 4), R), ((4,), R)]),
    ("setitem_mask_scalar", _setitem(torch.tensor(MASK), scalar=0.0), [((3, 4), R)]),
    ("setitem_mask_tensor", _setitem(torch.tensor(MASK), ()), [((3, 4), R), ((), R)]),
    ("setitem_twice", lambda a, v: _setitem(0, (4,))(a, v)[1:].sum(0) + _setitem(2, (4,))(a, v)[0],
     [((3, 4), R), ((4,), R)]),
]


@pytest.mark.parametrize("fn, specs", cases(INDEXING))
def test_indexing(fn, specs):
    check(fn, specs, str(specs))


def test_repeated_indices_accumulate():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]
    x.grad = None
    x.index_select(0, torch.tensor([1, 1])).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0]
    x.grad = None
    x.gather(0, torch.tensor([2, 2, 2])).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 3.0]


def test_setitem_gradient_values():
    """The overwritten region gets no gradient from the base; the value gets ḡ there."""
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([10.0, 20.0], dtype=torch.float64, requires_grad=True)
    b = a * 2
    b[0] = v
    (b * torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)).sum().backward()
    assert a.grad.tolist() == [[0.0, 0.0], [6.0, 8.0]]
    assert v.grad.tolist() == [1.0, 2.0]


# -- second derivatives: grad of grad against finite differences of the first gradient -------
def gradgradcheck(fn, specs, seed_text=""):
    """d/dx of vᵀ ∂f/∂x (built with create_graph=True) against finite differences of it."""
    rng = rng_for("gg" + seed_text)
    xs = tuple(leaf(s, rng) for s in specs)
    out = fn(*xs)
    v = torch.tensor(rng.standard_normal(tuple(out.shape)), dtype=torch.float64)

    def first_grad(*xs):
        with torch.enable_grad():   # gradcheck runs its finite differences under no_grad
            gs = grad(fn(*xs), xs, v, create_graph=True, allow_unused=True, materialize_grads=True)
        return gs

    gs = first_grad(*xs)
    assert all(g.requires_grad for g in gs), "create_graph=True gave a gradient without a graph"
    assert gradcheck(first_grad, xs)


SECOND_ORDER = [
    ("mul", lambda a, b: a * b * a, [((3, 4), R), ((4,), R)]),
    ("div", lambda a, b: a / b, [((3, 4), R), ((3, 1), "away")]),
    ("pow_scalar", lambda a: a ** 3, [((3, 4), R)]),
    ("pow_frac", lambda a: a ** 1.5, [((4,), "pos")]),
    ("pow_tensor", lambda a, b: a ** b, [((3, 4), "pos"), ((4,), R)]),
    ("rpow", lambda a: 2.0 ** a, [((4,), R)]),
    ("exp", lambda a: torch.exp(a) * a, [((3, 4), R)]),
    ("log", lambda a: torch.log(a) * a, [((3, 4), "pos")]),
    ("sqrt", lambda a: a.sqrt(), [((4,), "pos")]),
    ("tanh", torch.tanh, [((3, 4), R)]),
    ("sigmoid", torch.sigmoid, [((3, 4), R)]),
    ("sin_cos", lambda a: a.sin() * a.cos(), [((4,), R)]),
    ("cos", lambda a: a.cos(), [((3, 4), R)]),
    ("gelu", lambda a: torch.nn.functional.gelu(a), [((4,), R)]),
    ("softplus", lambda a: torch.nn.functional.softplus(a), [((4,), R)]),
    ("leaky_relu", lambda a: torch.nn.functional.leaky_relu(a, 0.2) * a, [((3, 4), "away")]),
    ("hardtanh", lambda a: torch.nn.functional.hardtanh(a * 3, -0.5, 0.5) * a, [((3, 4), "away")]),
    ("matmul_2d", lambda a, b: (a @ b) ** 2, [((3, 4), R), ((4, 5), R)]),
    ("matmul_batched", lambda a, b: (a @ b) ** 2, [((2, 3, 4), R), ((4, 2), R)]),
    ("matmul_bmm", lambda a, b: (a @ b).tanh(), [((2, 3, 4), R), ((2, 4, 2), R)]),
    ("matmul_broadcast", lambda a, b: (a @ b).tanh(), [((2, 1, 3, 4), R), ((3, 4, 2), R)]),
    ("mv", lambda a, b: (a @ b) ** 2, [((3, 4), R), ((4,), R)]),
    ("dot", lambda a, b: torch.dot(a, b) * a, [((4,), R), ((4,), R)]),
    ("sum", lambda a: a.sum() * a, [((3, 4), R)]),
    ("sum_dim", lambda a: a.sum(0, keepdim=True) * a, [((3, 4), R)]),
    ("mean", lambda a: a.mean(-1) ** 2, [((3, 4), R)]),
    ("mean_all", lambda a: a.mean() * a, [((3, 4), R)]),
    ("softmax", lambda a: torch.softmax(a, 1), [((3, 4), R)]),
    ("log_softmax", lambda a: torch.log_softmax(a, 0), [((3, 4), R)]),
    ("logsumexp", lambda a: torch.logsumexp(a, 1), [((3, 4), R)]),
    ("std", lambda a: a.std(0), [((3, 4), R)]),
    ("std_all", lambda a: a.std(), [((3, 4), R)]),
    ("var", lambda a: a.var(1, keepdim=True) * a, [((3, 4), R)]),
    ("norm", lambda a: a.norm(dim=1), [((3, 4), "away")]),
    ("prod", lambda a: a.prod(1), [((3, 4), R)]),
    ("prod_with_zeros", lambda a: a.prod(1) + a.prod(),
     [np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0], [1.5, 2.0, 3.0]])]),
    ("prod_one_zero", lambda a: a.prod(0) * a, [np.array([2.0, 0.0, 3.0, -1.5])]),
    ("index_int", lambda a: a[1] * a[2], [((3, 4), R)]),
    ("index_slice", lambda a: a[1:, ::2] ** 2, [((3, 4), R)]),
    ("index_tensor", lambda a: a[IDX] ** 2, [((3, 4), R)]),
    ("index_mask", lambda a: a[torch.tensor(MASK)] ** 2, [((3, 4), R)]),
    ("gather", lambda a: a.gather(1, torch.tensor([[0, 0], [3, 1], [2, 2]])) ** 2, [((3, 4), R)]),
    ("index_select", lambda a: a.index_select(1, torch.tensor([3, 3, 0])) ** 2, [((3, 4), R)]),
    ("diagonal", lambda a: torch.diagonal(a * a, 1), [((3, 4), R)]),
    ("trace", lambda a: torch.trace(a @ a.T) * a, [((3, 4), R)]),
    ("cat_stack", lambda a, b: torch.stack([torch.cat([a, b]) ** 2, torch.cat([b, a])]), [((4,), R), ((4,), R)]),
    ("where", lambda a: torch.where(a > 0, a ** 2, a ** 3), [((3, 4), "away")]),
    ("max_dim", lambda a: a.max(1).values ** 2, [((3, 4), "distinct")]),
    ("cumsum", lambda a: torch.cumsum(a, 1) ** 2, [((3, 4), R)]),
    ("setitem", lambda a, v: _setitem(1, (4,))(a, v) ** 2, [((3, 4), R), ((4,), R)]),
    ("transpose_reshape", lambda a: (a.T.reshape(2, 6) ** 2).sum(0), [((3, 4), R)]),
    ("expand_repeat", lambda a: a.expand(3, 4).repeat(2, 1) ** 2, [((1, 4), R)]),
]


@pytest.mark.parametrize("fn, specs", cases(SECOND_ORDER))
def test_second_order(fn, specs):
    gradgradcheck(fn, specs, str(specs))
