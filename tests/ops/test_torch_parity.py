"""The same programs run in gradviz and in PyTorch, from the same float64 inputs.

Each program is written once against a module `t` (gradviz or torch). Compared: the
output values, shapes and dtypes, every leaf's .grad after backward with the same seed
gradient, and the whole grad_fn graph: node names, next_functions edges (which node, which
input_nr, None where an input needs no grad) and shared nodes, down to the AccumulateGrad
of each leaf. Also dtype promotion and a few error messages.
"""
import warnings

import numpy as np
import pytest
from tests.support.op_inputs import PAIRS, SHAPES, graph_of, requires_grad, rng_for, sample

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

pytestmark = pytest.mark.torch

R = "real"


# -- running a program in both libraries ------------------------------------------------------
def run(t, prog, arrays, flags, weights_rng_text):
    xs = [t.tensor(a, dtype=t.float64, requires_grad=f) for a, f in zip(arrays, flags)]
    out = prog(t, *xs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    result = {
        "values": [o.detach().numpy() for o in outs],
        "dtypes": [str(o.dtype) for o in outs],
        "shapes": [tuple(o.shape) for o in outs],
        "graphs": [(graph_of(o.grad_fn, xs), o.output_nr if o.grad_fn is not None else 0) for o in outs],
    }
    diff = [o for o in outs if o.requires_grad]
    if diff:
        rng = rng_for(weights_rng_text)
        seeds = [t.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype) for o in diff]
        t.autograd.backward(diff, seeds)
    result["grads"] = [None if x.grad is None else x.grad.numpy() for x in xs]
    return result


def compare(prog, specs, text="", rtol=1e-10, atol=1e-12):
    rng = rng_for(text)
    arrays = [sample(s, rng) for s in specs]
    flags = [requires_grad(s) for s in specs]
    theirs = run(torch, prog, arrays, flags, text)
    ours = run(gradviz, prog, arrays, flags, text)
    assert ours["shapes"] == theirs["shapes"]
    assert ours["dtypes"] == theirs["dtypes"]
    for a, b in zip(ours["values"], theirs["values"]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    assert ours["graphs"] == theirs["graphs"]
    for i, (a, b) in enumerate(zip(ours["grads"], theirs["grads"])):
        assert (a is None) == (b is None), f"x{i}.grad: gradviz {a}, torch {b}"
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"x{i}.grad")
    return ours


def cases(table):
    return [pytest.param(prog, specs, id=name) for name, prog, specs in table]


def F(t):
    return t.nn.functional


# -- elementwise ops on every shape -------------------------------------------------------------
UNARY = [
    ("neg", lambda t, a: -a, "real"),
    ("abs", lambda t, a: t.abs(a), "away"),
    ("exp", lambda t, a: t.exp(a), "real"),
    ("log", lambda t, a: t.log(a), "pos"),
    ("log1p", lambda t, a: t.log1p(a), "gt-1"),
    ("sqrt", lambda t, a: a.sqrt(), "pos"),
    ("rsqrt", lambda t, a: t.rsqrt(a), "pos"),
    ("sin", lambda t, a: t.sin(a), "real"),
    ("cos", lambda t, a: a.cos(), "real"),
    ("tan", lambda t, a: t.tan(a), "unit"),
    ("tanh", lambda t, a: t.tanh(a), "real"),
    ("sigmoid", lambda t, a: t.sigmoid(a), "real"),
    ("relu", lambda t, a: t.relu(a), "away"),
    ("F.relu", lambda t, a: F(t).relu(a), "away"),
    ("leaky_relu", lambda t, a: F(t).leaky_relu(a, 0.2), "away"),
    ("gelu", lambda t, a: F(t).gelu(a), "real"),
    ("gelu_tanh", lambda t, a: F(t).gelu(a, approximate="tanh"), "real"),
    ("softplus", lambda t, a: F(t).softplus(a), "real"),
    ("softplus_beta", lambda t, a: F(t).softplus(a, beta=2.0, threshold=1.0), "real"),
    ("erf", lambda t, a: t.erf(a), "real"),
    ("clamp", lambda t, a: t.clamp(a, -0.5, 0.5), "real"),
    ("clamp_min", lambda t, a: a.clamp(min=0.1), "real"),
    ("clamp_tensor_min", lambda t, a: a.clamp(min=t.zeros(a.shape, dtype=t.float64)), "away"),
    ("sign", lambda t, a: t.sign(a), "away"),
    ("reciprocal", lambda t, a: t.reciprocal(a), "away"),
    ("pow_2", lambda t, a: a ** 2, "real"),
    ("pow_-1.5", lambda t, a: a.pow(-1.5), "pos"),
    ("pow_0", lambda t, a: a ** 0, "real"),
    ("rpow", lambda t, a: 2 ** a, "real"),
    ("radd", lambda t, a: 1.5 + a, "real"),
    ("rsub", lambda t, a: 1.5 - a, "real"),
    ("rmul", lambda t, a: 1.5 * a, "real"),
    ("rdiv", lambda t, a: 1.5 / a, "away"),
    ("sub_scalar", lambda t, a: a - 1, "real"),
    ("div_scalar", lambda t, a: a / 3, "real"),
    ("where_scalar", lambda t, a: t.where(a > 0, a, 0.0), "away"),
    ("masked_fill", lambda t, a: a.masked_fill(a < 0, 1.0), "away"),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("prog, domain", [pytest.param(p, d, id=n) for n, p, d in UNARY])
def test_unary(prog, domain, shape):
    compare(prog, [(shape, domain)], f"{domain}{shape}")


BINARY = [
    ("add", lambda t, a, b: a + b, "real", "real"),
    ("add_alpha", lambda t, a, b: t.add(a, b, alpha=2), "real", "real"),
    ("sub", lambda t, a, b: a - b, "real", "real"),
    ("mul", lambda t, a, b: a * b, "real", "real"),
    ("div", lambda t, a, b: a / b, "real", "away"),
    ("pow", lambda t, a, b: a ** b, "pos", "real"),
    ("maximum", lambda t, a, b: t.maximum(a, b), "distinct", "distinct"),
    ("clamp_by_tensors", lambda t, a, b: t.clamp(a, min=b, max=b + 1), "real", "real"),
    ("clamp_max_tensor", lambda t, a, b: a.clamp(max=b), "real", "real"),
    ("minimum", lambda t, a, b: t.minimum(a, b), "distinct", "distinct"),
    ("where", lambda t, a, b: t.where(a > b, a, b * 2), "real", "real"),
]


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("prog, da, db", [pytest.param(p, a, b, id=n) for n, p, a, b in BINARY])
def test_binary(prog, da, db, shapes):
    compare(prog, [(shapes[0], da), (shapes[1], db)], str(shapes))


@pytest.mark.parametrize("which", ["left", "right"])
@pytest.mark.parametrize("prog, da, db", [pytest.param(p, a, b, id=n) for n, p, a, b in BINARY])
def test_binary_one_input_requires_grad(prog, da, db, which):
    """next_functions has None for the input that needs no gradient."""
    compare(prog, [((3, 4), da, which == "left"), ((4,), db, which == "right")], which)


def test_ties_and_kinks_match_torch():
    data = np.array([0.0, 1.0, 1.0, -1.0, 0.0])
    compare(lambda t, a: t.maximum(a, a.flip(0)) + t.relu(a) + t.abs(a) + a.max() + a.amax(0) + a.clamp(0, 1)
            + t.sign(a) + a.norm(p=float("inf")) + a.min(0).values, [data])
    compare(lambda t, a: a ** 2.5 + a.sqrt(), [np.array([0.0, 2.0])])


# -- reductions --------------------------------------------------------------------------------
def _reductions():
    table = []
    for shape, dims in [((), [None, 0, -1]), ((4,), [None, 0, -1]), ((3, 4), [None, 0, 1, -1, (0, 1)]),
                        ((1, 4), [None, 0, 1]), ((2, 3, 4), [None, 1, (0, 2), (-1, 0)])]:
        for dim in dims:
            for keep in ([False] if dim is None else [False, True]):
                kw = {} if dim is None else {"dim": dim, "keepdim": keep}
                tag = f"{shape}-{dim}-{keep}"
                single = dim is None or isinstance(dim, int)
                n = int(np.prod(shape if dim is None or not shape else
                                [shape[d] for d in ((dim,) if isinstance(dim, int) else dim)], dtype=int))
                table += [
                    (f"sum-{tag}", lambda t, a, kw=kw: a.sum(**kw), [(shape, R)]),
                    (f"mean-{tag}", lambda t, a, kw=kw: t.mean(a, **kw), [(shape, R)]),
                    (f"amax-{tag}", lambda t, a, kw=kw: a.amax(**kw), [(shape, "distinct")]),
                    (f"amin-{tag}", lambda t, a, kw=kw: t.amin(a, **kw), [(shape, "distinct")]),
                    (f"norm-{tag}", lambda t, a, kw=kw: a.norm(**kw), [(shape, "away")]),
                    (f"norm1-{tag}", lambda t, a, kw=kw: a.norm(p=1, **kw), [(shape, "away")]),
                    (f"norm3-{tag}", lambda t, a, kw=kw: t.norm(a, p=3, **kw), [(shape, "away")]),
                    (f"norminf-{tag}", lambda t, a, kw=kw: a.norm(p=float("inf"), **kw), [(shape, "distinct")]),
                ]
                if dim is not None:
                    table.append((f"logsumexp-{tag}", lambda t, a, kw=kw: t.logsumexp(a, **kw), [(shape, R)]))
                for corr in (0, 1, 2):
                    if n - corr > 0 and n > 1:
                        table.append((f"var-{corr}-{tag}", lambda t, a, kw=kw, c=corr: a.var(correction=c, **kw),
                                      [(shape, R)]))
                        table.append((f"std-{corr}-{tag}", lambda t, a, kw=kw, c=corr: t.std(a, correction=c, **kw),
                                      [(shape, R)]))
                if n > 1:
                    table.append((f"var-unbiased=False-{tag}", lambda t, a, kw=kw: a.var(unbiased=False, **kw),
                                  [(shape, R)]))
                if single:
                    if dim is None:
                        table += [(f"prod-{tag}", lambda t, a: a.prod(), [(shape, R)]),
                                  (f"max-{tag}", lambda t, a: a.max(), [(shape, "distinct")]),
                                  (f"min-{tag}", lambda t, a: t.min(a), [(shape, "distinct")])]
                    else:
                        table += [
                            (f"prod-{tag}", lambda t, a, kw=kw: a.prod(**kw), [(shape, R)]),
                            (f"max-{tag}", lambda t, a, kw=kw: a.max(**kw).values, [(shape, "distinct")]),
                            (f"min-{tag}", lambda t, a, kw=kw: t.min(a, **kw)[0], [(shape, "distinct")]),
                            (f"max-indices-{tag}", lambda t, a, kw=kw: a.max(**kw).indices.double() * a.sum(),
                             [(shape, "distinct")]),
                        ]
                        if not keep:
                            table += [
                                (f"softmax-{tag}", lambda t, a, d=dim: t.softmax(a, d), [(shape, R)]),
                                (f"log_softmax-{tag}", lambda t, a, d=dim: F(t).log_softmax(a, dim=d), [(shape, R)]),
                                (f"cumsum-{tag}", lambda t, a, d=dim: a.cumsum(d), [(shape, R)]),
                            ]
    return table


MORE_REDUCTIONS = [
    ("sum_dim_empty_tuple", lambda t, a: a.sum(dim=()), [((2, 3), R)]),
    ("mean_dim_empty_list", lambda t, a: a.mean(dim=[]), [((2, 3), R)]),
    ("sum_dim_list", lambda t, a: a.sum(dim=[1, 0], keepdim=True), [((2, 3), R)]),
    ("norm_p0", lambda t, a: a.norm(p=0) * a, [np.array([1.0, 0.0, -2.0])]),
    ("std_positional_unbiased", lambda t, a: a.std(0, False), [((2, 3), R)]),
    ("var_keepdim_all", lambda t, a: a.var(dim=None, keepdim=True), [((2, 3), R)]),
    ("amax_tuple", lambda t, a: a.amax(dim=(0, 1)), [((2, 3), "distinct")]),
    ("masked_softmax", lambda t, a: a.masked_fill(t.tensor([[False, True, False]]), float("-inf")).softmax(-1),
     [((2, 3), R)]),
    ("masked_log_softmax", lambda t, a: a.masked_fill(t.tensor([False, True, False]), float("-inf")).log_softmax(0),
     [((3,), R)]),
    ("softmax_extremes", lambda t, a: t.softmax(a * 1000, -1) + t.log_softmax(a * 1000, -1).exp(), [((3,), R)]),
]


@pytest.mark.parametrize("prog, specs", cases(MORE_REDUCTIONS))
def test_more_reductions(prog, specs):
    compare(prog, specs, str(specs))


# dtype= casts the input before the reduction runs: the node is the reduction's own (torch records
# no ToCopyBackward0 for sum, mean, prod, nansum, cumsum, cumprod; softmax does), ḡ goes back in the leaf's dtype
DTYPE_REDUCTIONS = [
    ("sum_dtype", lambda t, a: a.sum(dtype=t.float32), [((3, 4), R)]),
    ("sum_dim_dtype", lambda t, a: t.sum(a, 1, dtype=t.float32) ** 2, [((3, 4), R)]),
    ("mean_keepdim_dtype", lambda t, a: a.mean(0, keepdim=True, dtype=t.float32) ** 2, [((3, 4), R)]),
    ("prod_dtype", lambda t, a: a.prod(dtype=t.float32), [((2, 3), R)]),
    ("prod_dim_dtype", lambda t, a: a.prod(1, dtype=t.float32), [np.array([[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]])]),
    ("nansum_dtype", lambda t, a: a.nansum(1, dtype=t.float32), [((3, 4), R)]),
    ("cumsum_dtype", lambda t, a: a.cumsum(1, dtype=t.float32) ** 2, [((3, 4), R)]),
    ("cumprod_dtype", lambda t, a: a.cumprod(0, dtype=t.float32), [((3, 4), R)]),
    ("softmax_dtype", lambda t, a: t.softmax(a, 1, dtype=t.float32), [((3, 4), R)]),
    ("log_softmax_dtype", lambda t, a: F(t).log_softmax(a, 0, dtype=t.float32), [((3, 4), R)]),
]


@pytest.mark.parametrize("prog, specs", cases(DTYPE_REDUCTIONS))
def test_reduction_with_dtype(prog, specs):
    ours = compare(prog, specs, str(specs), rtol=1e-5, atol=1e-6)
    assert ours["dtypes"] == ["torch.float32"]
    assert all(g is None or g.dtype == np.float64 for g in ours["grads"])


@pytest.mark.parametrize("prog, specs", cases(_reductions()))
def test_reduction(prog, specs):
    compare(prog, specs, str(specs))


@pytest.mark.parametrize("data", [np.array([2.0, 0.0, 3.0]), np.array([[0.0, 2.0], [0.0, 0.0], [1.0, 3.0]])],
                         ids=["one_zero", "zeros"])
def test_prod_with_zeros(data):
    compare(lambda t, a: a.prod() + a.prod(0).sum() + a.prod(-1, keepdim=True).sum(), [data])


# -- linear algebra ------------------------------------------------------------------------------
MATMUL_SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
                 ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)),
                 ((2, 1, 3, 4), (3, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)), ((2, 2, 3, 4), (4,)),
                 ((4,), (2, 2, 4, 5)), ((3, 4), (2, 2, 4, 5)), ((2, 1, 3, 4), (4,))]


@pytest.mark.parametrize("grads", ["both", "left", "right"])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes, grads):
    """All dim combinations, each with the operands that require grad varied: PyTorch folds
    a batch into one mm when the other operand requires grad, and uses bmm otherwise."""
    sa, sb = shapes
    specs = [(sa, R, grads != "right"), (sb, R, grads != "left")]
    compare(lambda t, a, b: a @ b, specs, str(shapes))
    compare(lambda t, a, b: t.matmul(a, b).sum(-1).exp(), specs, "fn" + str(shapes))


def test_matmul_of_non_contiguous_batches():
    """should_fold looks at the strides: a transposed batch does not fold when the matrix needs no grad."""
    compare(lambda t, a, b: a.transpose(0, 1) @ b, [((3, 2, 4), R), ((4, 5), R, False)])
    compare(lambda t, a, b: a.transpose(1, 2) @ b, [((2, 4, 3), R), ((4, 5), R, False)])
    compare(lambda t, a, b: a.transpose(0, 1) @ b, [((3, 2, 4), R), ((4, 5), R)])


LINALG = [
    ("mm", lambda t, a, b: t.mm(a, b), [((3, 4), R), ((4, 5), R)]),
    ("bmm", lambda t, a, b: t.bmm(a, b), [((2, 3, 4), R), ((2, 4, 5), R)]),
    ("dot", lambda t, a, b: t.dot(a, b), [((4,), R), ((4,), R)]),
    ("mv", lambda t, a, b: t.mv(a, b), [((3, 4), R), ((4,), R)]),
    ("outer", lambda t, a, b: t.outer(a, b), [((3,), R), ((4,), R)]),
    ("trace", lambda t, a: t.trace(a), [((3, 4), R)]),
    ("addmm", lambda t, b, x, y: t.addmm(b, x, y), [((5,), R), ((3, 4), R), ((4, 5), R)]),
    ("addmm_2d_bias", lambda t, b, x, y: t.addmm(b, x, y), [((3, 5), R), ((3, 4), R), ((4, 5), R)]),
    ("addmm_beta_alpha", lambda t, b, x, y: t.addmm(b, x, y, beta=0.5, alpha=2.0),
     [((5,), R), ((3, 4), R), ((4, 5), R)]),
    ("linear", lambda t, x, w, b: F(t).linear(x, w, b), [((3, 4), R), ((5, 4), R), ((5,), R)]),
    ("linear_no_bias", lambda t, x, w: F(t).linear(x, w), [((3, 4), R), ((5, 4), R)]),
    ("linear_const_input", lambda t, x, w, b: F(t).linear(x, w, b), [((3, 4), R, False), ((5, 4), R), ((5,), R)]),
    ("linear_3d", lambda t, x, w, b: F(t).linear(x, w, b), [((2, 3, 4), R), ((5, 4), R), ((5,), R)]),
    ("linear_1d", lambda t, x, w, b: F(t).linear(x, w, b), [((4,), R), ((5, 4), R), ((5,), R)]),
    ("linear_4d_no_bias", lambda t, x, w: F(t).linear(x, w), [((2, 2, 3, 4), R), ((5, 4), R)]),
    ("linear_2d_bias", lambda t, x, w, b: F(t).linear(x, w, b), [((2, 3, 4), R), ((5, 4), R), ((3, 5), R)]),
    ("linear_transposed_input", lambda t, x, w, b: F(t).linear(x.transpose(0, 1), w, b),
     [((2, 3, 4), R), ((5, 4), R), ((5,), R)]),
    ("diagonal", lambda t, a: t.diagonal(a), [((3, 4), R)]),
    ("diagonal_offsets", lambda t, a: t.diagonal(a, 1).sum() + a.diagonal(-1).sum() + a.diagonal(3).sum(),
     [((3, 4), R)]),
    ("diagonal_3d", lambda t, a: a.diagonal(0, 1, 2), [((2, 3, 4), R)]),
    ("diagonal_reshape", lambda t, a: a.diagonal().reshape(3, 1), [((3, 4), R)]),
]


@pytest.mark.parametrize("prog, specs", cases(LINALG))
def test_linalg(prog, specs):
    compare(prog, specs, str(specs))


# -- shape ops ------------------------------------------------------------------------------------
def _T(a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return a.T


SHAPE_OPS = [
    ("reshape", lambda t, a: a.reshape(4, 3), [((3, 4), R)]),
    ("reshape_same", lambda t, a: a.reshape(3, 4), [((3, 4), R)]),
    ("view", lambda t, a: a.view(2, 6), [((3, 4), R)]),
    ("view_as", lambda t, a, b: a.view_as(b), [((3, 4), R), ((12,), R, False)]),
    ("reshape_of_T", lambda t, a: a.T.reshape(-1), [((3, 4), R)]),
    ("reshape_of_T_alias", lambda t, a: a.T.reshape(2, 2, 3), [((3, 4), R)]),
    ("reshape_of_T_same_shape", lambda t, a: a.T.reshape(4, 3), [((3, 4), R)]),
    ("view_of_T", lambda t, a: a.T.view(2, 2, 3), [((3, 4), R)]),
    ("reshape_of_expand", lambda t, a: a.expand(3, 4).reshape(-1), [((1, 4), R)]),
    ("reshape_of_slice", lambda t, a: a[:, 1:3].reshape(-1) + a[1:].reshape(-1)[:6], [((3, 4), R)]),
    ("reshape_of_flip", lambda t, a: a.flip(0).reshape(-1), [((3, 4), R)]),
    ("reshape_of_clone_of_T", lambda t, a: a.T.clone().reshape(-1), [((3, 4), R)]),
    ("transpose_flatten", lambda t, a: a.transpose(1, 2).flatten(2), [((2, 3, 4, 1), R)]),
    # whether reshape copies depends on the strides each op leaves behind
    ("reshape_after_unary_of_T", lambda t, a: (a.T * 2).exp().reshape(-1), [((3, 4), R)]),
    ("reshape_after_contiguous_plus_T", lambda t, a, b: (b + a.T).reshape(-1), [((3, 4), R), ((4, 3), R)]),
    ("reshape_after_reduction", lambda t, a: a.reshape(2, 2, 3).permute(2, 0, 1).sum(1).reshape(-1), [((3, 4), R)]),
    ("reshape_after_softmax_of_T", lambda t, a: a.T.softmax(0).reshape(-1) + a.T.log_softmax(1).reshape(-1),
     [((3, 4), R)]),
    ("reshape_after_cumsum_of_T", lambda t, a: a.T.cumsum(0).reshape(-1), [((3, 4), R)]),
    ("reshape_after_index_of_T", lambda t, a: a.T[:, [0, 1]].reshape(-1).sum() + a.T[[1, 0]].reshape(-1).sum(),
     [((3, 4), R)]),
    ("reshape_after_flip_of_T", lambda t, a: a.T.flip(0).reshape(-1), [((3, 4), R)]),
    ("reshape_after_masked_fill_of_T", lambda t, a: a.T.masked_fill(a.T > 0, 0.0).reshape(-1), [((3, 4), R)]),
    ("reshape_after_slices_of_T", lambda t, a: a.T[1:].reshape(-1).sum() + a.T[:, 1:].reshape(-1).sum()
     + a.T.unsqueeze(1).reshape(-1).sum(), [((3, 4), R)]),
    ("attention_heads", lambda t, a: a.view(2, 3, 2, 2).transpose(1, 2).reshape(2, 2, 6).transpose(1, 2)
     .contiguous().view(2, 12), [((2, 3, 4), R)]),
    ("contiguous", lambda t, a: a.T.contiguous() + a.contiguous().T, [((3, 4), R)]),
    ("flatten", lambda t, a: t.flatten(a), [((2, 3, 4), R)]),
    ("flatten_1d", lambda t, a: a.flatten() * 2, [((4,), R)]),
    ("flatten_scalar", lambda t, a: a.flatten(), [((), R)]),
    ("flatten_1", lambda t, a: a.flatten(1), [((2, 3, 4), R)]),
    ("squeeze", lambda t, a: a.squeeze(), [((1, 4), R)]),
    ("squeeze_dim", lambda t, a: a.squeeze(0), [((1, 4), R)]),
    ("squeeze_dim_noop", lambda t, a: a.squeeze(1), [((1, 4), R)]),
    ("squeeze_dims", lambda t, a: a.squeeze((0, 2)), [((1, 4, 1), R)]),
    ("unsqueeze", lambda t, a: a.unsqueeze(-1), [((3, 4), R)]),
    ("transpose", lambda t, a: a.transpose(0, 1), [((3, 4), R)]),
    ("permute", lambda t, a: a.permute(2, 0, 1), [((2, 3, 4), R)]),
    ("t", lambda t, a: a.t(), [((3, 4), R)]),
    ("t_1d", lambda t, a: a.t(), [((4,), R)]),
    ("T", lambda t, a: a.T, [((3, 4), R)]),
    ("T_1d", lambda t, a: _T(a) * 2, [((4,), R)]),
    ("T_3d", lambda t, a: _T(a), [((2, 3, 4), R)]),
    ("mT", lambda t, a: a.mT, [((2, 3, 4), R)]),
    ("expand", lambda t, a: a.expand(2, 3, 4), [((1, 4), R)]),
    ("expand_-1", lambda t, a: a.expand(3, -1), [((1, 4), R)]),
    ("expand_as", lambda t, a, b: a.expand_as(b) * b, [((4,), R), ((3, 4), R)]),
    ("repeat", lambda t, a: a.repeat(2, 1, 2), [((1, 4), R)]),
    ("cat", lambda t, a, b: t.cat([a, b], 1), [((3, 4), R), ((3, 2), R)]),
    ("cat_const", lambda t, a, b: t.cat([a, b, a]), [((4,), R), ((2,), R, False)]),
    ("cat_mixed_dtypes", lambda t, a, b: t.cat([a.float(), b]), [((4,), R), ((2,), R)]),
    ("stack_mixed_dtypes", lambda t, a, b: t.stack([a, b.float()], 1), [((4,), R), ((4,), R)]),
    ("stack", lambda t, a, b: t.stack([a, b], -1), [((3, 4), R), ((3, 4), R)]),
    ("split", lambda t, a: a.split(3, 1), [((3, 4), R)]),
    ("split_sizes", lambda t, a: t.split(a, [1, 3], 1), [((3, 4), R)]),
    ("split_partial", lambda t, a: a.split(2)[1] * 2, [((3, 4), R)]),
    ("chunk", lambda t, a: a.chunk(3), [((4,), R)]),
    ("unbind", lambda t, a: a.unbind(1), [((3, 4), R)]),
    ("unbind_partial", lambda t, a: a.unbind()[1].exp(), [((3, 4), R)]),
    ("flip", lambda t, a: a.flip(0, 1), [((3, 4), R)]),
    ("clone", lambda t, a: a.clone(), [((3, 4), R)]),
    ("double_noop", lambda t, a: a.double() * 2, [((3, 4), R)]),
    ("to_float32_and_back", lambda t, a: a.float().double() * 2, [((3, 4), R)]),
]


@pytest.mark.parametrize("prog, specs", cases(SHAPE_OPS))
def test_shape(prog, specs):
    compare(prog, specs, str(specs), rtol=1e-6 if "float32" in str(prog) else 1e-10)


# -- indexing --------------------------------------------------------------------------------------
def _set(key, value=None):
    def fn(t, a, *v):
        b = a * 2
        b[key(t) if callable(key) else key] = v[0] if v else value
        return b
    return fn


MASK = [[True, False, True, False], [False, False, False, False], [True, True, False, True]]
INDEXING = [
    ("x[0]", lambda t, a: a[0], [((3, 4), R)]),
    ("x[-1, 2]", lambda t, a: a[-1, 2], [((3, 4), R)]),
    ("x[1:3]", lambda t, a: a[1:3], [((3, 4), R)]),
    ("x[::2, 1::2]", lambda t, a: a[::2, 1::2], [((3, 4), R)]),
    ("x[:]", lambda t, a: a[:], [((3, 4), R)]),
    ("x[:, :]", lambda t, a: a[:, :], [((3, 4), R)]),
    ("x[...]", lambda t, a: a[...], [((3, 4), R)]),
    ("x[...]_0d", lambda t, a: a[...], [((), R)]),
    ("x[None]", lambda t, a: a[None], [((3, 4), R)]),
    ("x[..., None, 1]", lambda t, a: a[..., None, 1], [((2, 3, 4), R)]),
    ("x[:, None, 1:]", lambda t, a: a[:, None, 1:], [((3, 4), R)]),
    ("x[idx]", lambda t, a: a[t.tensor([0, 2, 0, 0])], [((3, 4), R)]),
    ("x[list]", lambda t, a: a[[2, 2, 1]], [((3, 4), R)]),
    ("x[:, list]", lambda t, a: a[:, [3, 1, 3]], [((3, 4), R)]),
    ("x[list, list]", lambda t, a: a[[0, 2, 0], [1, 3, 1]], [((3, 4), R)]),
    ("x[[list, list]]", lambda t, a: a[[[0, 2, 0], [1, 3, 1]]], [((3, 4), R)]),   # a list of lists is a tuple
    ("x[[list]]", lambda t, a: a[[[2, 0]]], [((3, 4), R)]),
    ("x[0, list]", lambda t, a: a[0, [1, 1, 3]], [((3, 4), R)]),
    ("x[list, 1:]", lambda t, a: a[[1, 0], 1:], [((3, 4), R)]),
    ("x[0, :, list]", lambda t, a: a[0, :, [1, 2]], [((2, 3, 4), R)]),
    ("x[list, :, list]", lambda t, a: a[[0, 1], :, [1, 2]], [((2, 3, 4), R)]),
    ("x[idx2d]", lambda t, a: a[t.tensor([[0, 1], [1, 1]])], [((3, 4), R)]),
    ("x[tensor0d]", lambda t, a: a[t.tensor(1)], [((3, 4), R)]),
    ("x[[]]", lambda t, a: a[[]], [((3, 4), R)]),
    ("x[:, []]", lambda t, a: a[:, t.tensor([], dtype=t.long)], [((3, 4), R)]),
    ("x[True]", lambda t, a: a[True], [((3, 4), R)]),
    ("x[-5:10]", lambda t, a: a[-5:10], [((3, 4), R)]),
    ("x[2:1]", lambda t, a: a[2:1], [((3, 4), R)]),
    ("x[mask]", lambda t, a: a[t.tensor(MASK)], [((3, 4), R)]),
    ("x[byte_mask]", lambda t, a: a[t.tensor(MASK, dtype=t.uint8)], [((3, 4), R)]),
    ("x[row_mask, 1]", lambda t, a: a[t.tensor([True, False, True]), 1], [((3, 4), R)]),
    ("x[x > 0]", lambda t, a: a[a > 0], [((3, 4), "away")]),
    ("gather", lambda t, a: a.gather(1, t.tensor([[0, 0], [3, 1], [2, 2]])), [((3, 4), R)]),
    ("scatter_add", lambda t, a, s: a.scatter_add(1, t.tensor([[0, 0], [3, 1], [2, 2]]), s),
     [((3, 4), R), ((3, 2), R)]),
    ("index_select", lambda t, a: a.index_select(1, t.tensor([3, 3, 0])), [((3, 4), R)]),
    ("b[0] = 5", _set(0, 5.0), [((3, 4), R)]),
    ("b[1] = v", _set(1), [((3, 4), R), ((4,), R)]),
    ("b[:, 1:3] = v", _set((slice(None), slice(1, 3))), [((3, 4), R), ((3, 2), R)]),
    ("b[::2] = v0d", _set(slice(None, None, 2)), [((3, 4), R), ((), R)]),
    ("b[idx] = v", _set(lambda t: t.tensor([0, 2])), [((3, 4), R), ((4,), R)]),
    ("b[mask] = 0", _set(lambda t: t.tensor(MASK), 0.0), [((3, 4), R)]),
    ("b[[list, list]] = v", _set([[0, 2], [1, 3]]), [((3, 4), R), ((2,), R)]),
    ("b[byte_mask] = v", _set(lambda t: t.tensor(MASK, dtype=t.uint8)), [((3, 4), R), ((5,), R)]),
    ("b[0, list] = v", _set((0, [1, 3])), [((3, 4), R), ((2,), R)]),
    ("b[1] = const", _set(1), [((3, 4), R), ((4,), R, False)]),
]


@pytest.mark.parametrize("prog, specs", cases(INDEXING))
def test_indexing(prog, specs):
    compare(prog, specs, str(specs))


# -- longer programs: whole chains ---------------------------------------------------------------------
def _barlow_loss(t, z1, z2):
    n = z1.shape[0]
    z1 = (z1 - z1.mean(0)) / z1.std(0)
    z2 = (z2 - z2.mean(0)) / z2.std(0)
    c = z1.T @ z2 / n
    return -t.diagonal(c).sum()


def _mlp(t, x, w1, b1, w2, b2):
    h = F(t).relu(F(t).linear(x, w1, b1))
    logits = h @ w2.T + b2
    return F(t).log_softmax(logits, dim=1)[t.arange(3), t.tensor([0, 2, 1])].mean().neg()


def _attention(t, x, wq, wk):
    q, k = x @ wq, x @ wk
    scores = q @ k.transpose(-2, -1) / 2.0
    return t.softmax(scores, dim=-1) @ x


def _layernorm(t, x, w):
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mu) / (var + 1e-5).sqrt() * w


PROGRAMS = [
    ("tutorial_mul", lambda t, x, y: x * y, [((), R), ((), R, False)]),
    ("tutorial_pow3_sum", lambda t, x: x.pow(3).sum(), [((5,), R)]),
    ("tutorial_doubling", lambda t, x: x * 2 * 2 * 2 * 2, [((3,), R)]),
    ("tutorial_mm", lambda t, x, m: t.mm(x, m), [((1, 2), R), ((2, 2), R, False)]),
    ("barlow_twins_loss", _barlow_loss, [((5, 3), R), ((5, 3), R)]),
    ("mlp_nll", _mlp, [((3, 4), R), ((5, 4), R), ((5,), R), ((3, 5), R), ((3,), R)]),
    ("attention", _attention, [((2, 3, 4), R), ((4, 4), R), ((4, 4), R)]),
    ("layernorm", _layernorm, [((2, 3, 4), R), ((4,), R)]),
    ("shared_input", lambda t, x: (x * x.exp() + x.sin()).sum(), [((3,), R)]),
    ("diamond", lambda t, x: (lambda y: y.tanh() * y.sigmoid())(x * 3), [((2, 2), R)]),
    ("scalar_minus_tensor_chain", lambda t, x: (1 - x.sigmoid()).log().mean(), [((4,), R)]),
    ("cross_entropy", lambda t, x: F(t).cross_entropy(x, t.tensor([1, 0, 3])), [((3, 4), R)]),
    ("mse_loss", lambda t, x, y: F(t).mse_loss(x, y), [((3, 4), R), ((3, 4), R, False)]),
    ("norm_and_softmax", lambda t, x: t.softmax(x / x.norm(dim=1, keepdim=True), 0).logsumexp(1),
     [((3, 4), R)]),
    ("index_then_setitem", lambda t, x, v: (lambda b: (b.__setitem__((slice(None), 0), v), b)[1])(x[1:] * 2).sum(0),
     [((3, 4), R), ((2,), R)]),
]


@pytest.mark.parametrize("prog, specs", cases(PROGRAMS))
def test_program(prog, specs):
    compare(prog, specs, str(specs))


# -- second derivatives: grad of (vᵀ ∂f/∂x)·w, with create_graph=True, in both -------------------------
def _second(t, prog, arrays, text):
    xs = [t.tensor(a, dtype=t.float64, requires_grad=True) for a in arrays]
    out = prog(t, *xs)
    rng = rng_for(text)
    v = t.tensor(rng.standard_normal(tuple(out.shape)), dtype=t.float64)
    gs = t.autograd.grad(out, xs, v, create_graph=True, allow_unused=True)
    s = sum((g * t.tensor(rng.standard_normal(tuple(g.shape)), dtype=t.float64)).sum() for g in gs if g is not None)
    hs = t.autograd.grad(s, xs, allow_unused=True) if getattr(s, "requires_grad", False) else [None] * len(xs)
    return [None if g is None else g.detach().numpy() for g in gs], [
        np.zeros(np.shape(a)) if h is None else h.detach().numpy() for a, h in zip(arrays, hs)]


SECOND = [
    ("prod_one_zero", lambda t, a: a.prod(), [np.array([0.0, 2.0, 3.0])]),
    ("prod_two_zeros", lambda t, a: a.prod(), [np.array([0.0, 0.0, 3.0])]),
    ("prod_dim_zeros", lambda t, a: a.prod(1), [np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0], [1.0, 2.0, 3.0]])]),
    ("norm_inf", lambda t, a: a.norm(p=float("inf")) * a, [((4,), "distinct")]),
    ("norm3_dim", lambda t, a: a.norm(p=3, dim=0), [((3, 2), "away")]),
    ("amax", lambda t, a: a.amax(1) * a.sum(), [((3, 2), "distinct")]),
    ("max_dim", lambda t, a: a.min(0).values ** 2, [((3, 2), "distinct")]),
    ("abs_relu_clamp", lambda t, a: a.abs() * a + t.relu(a) ** 2 + a.clamp(-0.5, 0.5) ** 2, [((4,), "away")]),
    ("clamp_tensor", lambda t, a, b: t.clamp(a, min=b) ** 2, [((4,), R), ((4,), R)]),
    ("maximum", lambda t, a, b: t.maximum(a, b) ** 2, [((4,), "distinct"), ((4,), R)]),
    ("tan_rsqrt_reciprocal", lambda t, a: t.tan(a) + t.rsqrt(a) + a.reciprocal() + a.log1p(), [((4,), "pos")]),
    ("erf_gelu_softplus", lambda t, a: t.erf(a) + F(t).gelu(a, approximate="tanh") + F(t).softplus(a, 2, 1),
     [((4,), R)]),
    ("pow_forms", lambda t, a, b: a ** b + 3.0 ** a + a ** -2 + (2 - a) ** 2, [((4,), "pos"), ((4,), R)]),
    ("div_remainder", lambda t, a, b: a / b + (a % b) ** 2, [((4,), R), ((4,), "pos")]),
    ("where_masked_fill", lambda t, a, b: t.where(a > 0, a, b) ** 2 + a.masked_fill(a > 0, 1.0) ** 2,
     [((4,), "away"), ((4,), R)]),
    ("var_std", lambda t, a: a.var(0) + (a.std(1, keepdim=True) * a).sum(0), [((3, 2), R)]),
    ("softmax_family", lambda t, a: a.logsumexp(0) + a.softmax(0).sum(1)[:2] + a.log_softmax(1)[0], [((3, 2), R)]),
    ("cumsum", lambda t, a: a.cumsum(1) ** 2, [((3, 2), R)]),
    ("addmm", lambda t, b, x, y: t.addmm(b, x, y, beta=0.5, alpha=2) ** 2, [((2,), R), ((3, 4), R), ((4, 2), R)]),
    ("matmuls", lambda t, x, y, z: ((x @ y) ** 2).sum() + ((y.mT @ x.mT) ** 2).sum() + (z @ y[:, 0]).sum() ** 2,
     [((2, 3, 4), R), ((4, 2), R), ((3, 4), R)]),
    ("mv_dot_outer_trace", lambda t, x, y: t.mv(x, y).sum() ** 2 + t.dot(y, y) ** 2 + t.outer(y, y).sum() * t.trace(x),
     [((3, 4), R), ((4,), R)]),
    ("shape_ops", lambda t, x: (x.T.reshape(-1) ** 2).sum() + (x.flip(0) * x).sum() + (x.repeat(2, 1) ** 3).sum()
     + (x.split([1, 3], 1)[1] ** 2).sum() + (x.unbind(1)[2] ** 2).sum() + (x.diagonal(1) ** 2).sum(),
     [((3, 4), R)]),
    ("indexing", lambda t, x, v: (lambda b: (b.__setitem__((0, [1, 2]), v), b ** 2)[1])(x * 1).sum()
     + (x[0, [1, 1]] ** 2).sum() + (x[x > 0] ** 3).sum() + (x[...] * x).sum(), [((3, 4), "away"), ((2,), R)]),
    ("scatter_gather", lambda t, x, s: (x.scatter_add(1, t.tensor([[0, 0], [3, 1], [2, 2]]), s) ** 2).sum()
     + (x.gather(1, t.tensor([[1], [1], [0]])) ** 3).sum(), [((3, 4), R), ((3, 2), R)]),
    ("losses", lambda t, x, y: F(t).cross_entropy(x, t.tensor([1, 0, 3])) + F(t).mse_loss(x, y),
     [((3, 4), R), ((3, 4), R)]),
    ("casts", lambda t, x: x.float().double() ** 2, [((4,), R)]),
]


@pytest.mark.parametrize("prog, specs", cases(SECOND))
def test_second_derivatives(prog, specs):
    rng = rng_for(str(specs))
    arrays = [sample(s, rng) for s in specs]
    ours, theirs = _second(gradviz, prog, arrays, "v"), _second(torch, prog, arrays, "v")
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6 if "float" in str(prog) else 1e-9, atol=1e-10)


# -- float32 (the default dtype): values to float32 precision, dtypes of results and of .grad ----------
FLOAT32 = ([(n, p, [((3, 4), d)]) for n, p, d in UNARY] + [(n, p, [((3, 4), a), ((4,), b)]) for n, p, a, b in BINARY]
           + LINALG + PROGRAMS)


@pytest.mark.parametrize("prog, specs", cases(FLOAT32))
def test_float32(prog, specs):
    rng = rng_for("f32" + str(specs))
    arrays = [sample(s, rng).astype(np.float32) for s in specs]
    results = []
    for t in (torch, gradviz):
        xs = [t.tensor(a, requires_grad=requires_grad(s)) for a, s in zip(arrays, specs)]
        out = prog(t, *xs)
        if out.requires_grad:
            out.backward(t.ones_like(out))
        results.append((str(out.dtype), out.detach().numpy(), [None if x.grad is None else x.grad for x in xs]))
    (dtype, value, grads), (tdtype, tvalue, tgrads) = results
    assert dtype == tdtype
    np.testing.assert_allclose(value, tvalue, rtol=1e-4, atol=1e-5)
    for g, tg in zip(grads, tgrads):
        assert (g is None) == (tg is None)
        if g is not None:
            assert str(g.dtype) == str(tg.dtype) == "torch.float32"   # a leaf's .grad has the leaf's dtype
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-3, atol=1e-4)


# -- the names a learner meets first ------------------------------------------------------------------
NAMED = [
    (".T", lambda t, a: a.T, "PermuteBackward0"),
    (".mT", lambda t, a: a.mT, "TransposeBackward0"),
    ("reshape", lambda t, a: a.reshape(-1), "ViewBackward0"),
    ("x[0]", lambda t, a: a[0], "SelectBackward0"),
    ("x[1:3]", lambda t, a: a[1:3], "SliceBackward0"),
    ("x[idx]", lambda t, a: a[t.tensor([0, 0])], "IndexBackward0"),
    ("sum()", lambda t, a: a.sum(), "SumBackward0"),
    ("sum(dim)", lambda t, a: a.sum(1), "SumBackward1"),
    ("mean()", lambda t, a: a.mean(), "MeanBackward0"),
    ("mean(dim)", lambda t, a: a.mean(0), "MeanBackward1"),
    ("2-D @", lambda t, a: a @ a.T, "MmBackward0"),
    ("1-D @ 1-D", lambda t, a: a[0] @ a[1], "DotBackward0"),
    ("scalar - tensor", lambda t, a: 1 - a, "RsubBackward1"),
    ("tensor - scalar", lambda t, a: a - 1, "SubBackward0"),
    ("scalar / tensor", lambda t, a: 1 / a, "MulBackward0"),
    ("tensor ** 2", lambda t, a: a ** 2, "PowBackward0"),
    ("2 ** tensor", lambda t, a: 2 ** a, "PowBackward2"),
    ("F.linear", lambda t, a: F(t).linear(a, a, a[0]), "AddmmBackward0"),
    ("F.linear without bias", lambda t, a: F(t).linear(a, a), "MmBackward0"),
    ("max()", lambda t, a: a.max(), "MaxBackward1"),
    ("max(dim)", lambda t, a: a.max(1)[0], "MaxBackward0"),
    ("x.float()", lambda t, a: a.float(), "ToCopyBackward0"),
    ("b[0] = 1", lambda t, a: _set(0, 1.0)(t, a), "CopySlices"),
    ("b[idx] = 1", lambda t, a: _set(lambda t: t.tensor([0]), 1.0)(t, a), "IndexPutBackward0"),
    ("x.T.reshape(-1)", lambda t, a: a.T.reshape(-1), "UnsafeViewBackward0"),
    ("batched @", lambda t, a: a.expand(2, 4, 4) @ a, "UnsafeViewBackward0"),
    ("x[...]", lambda t, a: a[...], "AliasBackward0"),
]


@pytest.mark.parametrize("prog, expected", [pytest.param(p, e, id=n) for n, p, e in NAMED])
def test_grad_fn_name(prog, expected):
    for t in (torch, gradviz):
        a = t.ones(4, 4, dtype=t.float64, requires_grad=True)
        out = prog(t, a)
        assert out.grad_fn.name().replace("torch::autograd::", "") == expected, t.__name__
        assert f"<{expected} object at 0x" in repr(out.grad_fn), t.__name__


# -- dtypes ---------------------------------------------------------------------------------------------
DTYPE_PROGRAMS = [
    ("float32 * python float", lambda t: t.ones(3) * 2.5),
    ("float32 + python int", lambda t: t.ones(3) + 1),
    ("int * python float", lambda t: t.arange(3) * 2.5),
    ("int * python int", lambda t: t.arange(3) * 2),
    ("int / int", lambda t: t.arange(3) / t.tensor([1, 2, 4])),
    ("int / python int", lambda t: t.arange(3) / 2),
    ("int // python int", lambda t: t.arange(5) // 2),
    ("float32 * float64 0-d", lambda t: t.ones(3) * t.tensor(2.0, dtype=t.float64)),
    ("float32 0-d * float64 0-d", lambda t: t.tensor(3.0) * t.tensor(2.0, dtype=t.float64)),
    ("int * float64 0-d", lambda t: t.arange(3) * t.tensor(2.5, dtype=t.float64)),
    ("int * float32 0-d", lambda t: t.arange(3) * t.tensor(2.5)),
    ("float32 * int 0-d", lambda t: t.ones(3) * t.tensor(2)),
    ("int32 + int64", lambda t: t.arange(3).int() + t.arange(3)),
    ("int32 * float64 0-d", lambda t: t.arange(3).int() * t.tensor(2.0, dtype=t.float64)),
    ("bool * int", lambda t: t.ones(3, dtype=t.bool) * 2),
    ("bool * float", lambda t: t.ones(3, dtype=t.bool) * 2.5),
    ("int ** 2", lambda t: t.arange(3) ** 2),
    ("int ** 2.5", lambda t: t.arange(3) ** 2.5),
    ("2 ** int", lambda t: 2 ** t.arange(3)),
    ("2.5 ** int", lambda t: 2.5 ** t.arange(3)),
    ("float32 ** float64 tensor", lambda t: t.ones(3) ** t.ones(3, dtype=t.float64)),
    ("where(int, float)", lambda t: t.where(t.arange(3) > 0, t.arange(3), 1.5)),
    ("maximum(int, float32)", lambda t: t.maximum(t.arange(3), t.ones(3))),
    ("int sum", lambda t: t.arange(3).sum()),
    ("bool sum", lambda t: t.ones(3, dtype=t.bool).sum()),
    ("int32 sum", lambda t: t.arange(3).int().sum()),
    ("comparison", lambda t: t.ones(3) > 0.5),
    ("tensor([1, 2])", lambda t: t.tensor([1, 2])),
    ("tensor([1.0])", lambda t: t.tensor([1.0])),
    ("tensor(True)", lambda t: t.tensor(True)),
    ("arange(5).float()", lambda t: t.arange(5).float()),
    ("float64 softmax", lambda t: t.softmax(t.ones(3, dtype=t.float64), 0)),
    ("float32 @ float32", lambda t: t.ones(2, 3) @ t.ones(3)),
    ("cat float32 float64", lambda t: t.cat([t.ones(2), t.ones(2, dtype=t.float64)])),
    ("mean float32", lambda t: t.ones(3).mean()),
    ("float32 - float64 0-d requiring grad", lambda t: t.ones(3) - t.tensor(1.0, dtype=t.float64,
                                                                             requires_grad=True)),
]


@pytest.mark.parametrize("prog", [pytest.param(p, id=n) for n, p in DTYPE_PROGRAMS])
def test_dtype_promotion(prog):
    ours, theirs = prog(gradviz), prog(torch)
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)


def test_gradient_dtype_follows_the_leaf():
    """A float32 leaf used in float64 arithmetic gets a float32 .grad (ToCopyBackward0 casts back)."""
    for t in (torch, gradviz):
        x = t.ones(3, requires_grad=True)
        y = (x.double() * t.tensor([1.0, 2.0, 3.0], dtype=t.float64)).sum()
        y.backward()
        assert str(x.grad.dtype) == "torch.float32"
        assert x.grad.tolist() == [1.0, 2.0, 3.0]
        z = t.ones(3, requires_grad=True)
        (z * t.tensor(2.0, dtype=t.float64)).sum().backward()
        assert str(z.grad.dtype) == "torch.float32"


def test_gradient_dtype_follows_the_leaf_with_create_graph():
    """With create_graph the engine's cast to the input's dtype is recorded (ToCopyBackward0)."""
    found = []
    for t in (torch, gradviz):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        w = t.tensor([3.0, 4.0], dtype=t.float64, requires_grad=True)
        (g,) = t.autograd.grad((x * w).sum(), x, create_graph=True)
        (gw,) = t.autograd.grad(g.sum(), w)
        found.append((str(g.dtype), g.grad_fn.name(), g.grad_fn.next_functions[0][0].name(), g.tolist(),
                      str(gw.dtype), gw.tolist()))
    assert found[1] == found[0] == ("torch.float32", "ToCopyBackward0", "MulBackward0", [3.0, 4.0],
                                    "torch.float64", [1.0, 1.0])


# -- errors: gradviz's message contains PyTorch's --------------------------------------------------------
ERRORS = [
    ("broadcast", lambda t: t.ones(3) + t.ones(4)),
    ("mm shapes", lambda t: t.ones(2, 3) @ t.ones(4, 5)),
    ("mm dtypes", lambda t: t.ones(2, 2) @ t.ones(2, 2, dtype=t.float64)),
    ("matmul 0-d", lambda t: t.ones(()) @ t.ones(3)),
    ("index out of bounds", lambda t: t.ones(3, 4)[3]),
    ("too many indices", lambda t: t.ones(3)[0, 0]),
    ("mask shape", lambda t: t.ones(3, 4)[t.tensor([True, False])]),
    ("float index", lambda t: t.ones(3)[t.tensor([0.0])]),
    ("view of non-contiguous", lambda t: t.ones(3, 4).T.view(12)),
    ("reshape size", lambda t: t.ones(3, 4).reshape(5, -1)),
    ("dim out of range", lambda t: t.ones(3, 4).sum(2)),
    ("mean of int", lambda t: t.arange(3).mean()),
    ("expand", lambda t: t.ones(3).expand(2, 4)),
    ("stack sizes", lambda t: t.stack([t.ones(3), t.ones(4)])),
    ("t of 3-D", lambda t: t.ones(2, 3, 4).t()),
    ("repeated dim", lambda t: t.ones(2, 3).sum(dim=(0, -2))),
    ("repeated flip dim", lambda t: t.ones(2, 3).flip(1, -1)),
    ("softmax dim", lambda t: t.ones(2, 3).softmax(2)),
    ("cat dims", lambda t: t.cat([t.ones(2, 3), t.ones(3, 3)], 1)),
]


@pytest.mark.parametrize("prog", [pytest.param(p, id=n) for n, p in ERRORS])
def test_error_message(prog):
    with pytest.raises(Exception) as theirs:
        prog(torch)
    with pytest.raises(Exception) as ours:
        prog(gradviz)
    expected = str(theirs.value).split("\n")[0]
    assert expected in str(ours.value)
    builtin = next(c for c in type(theirs.value).__mro__ if c.__module__ == "builtins")
    assert isinstance(ours.value, builtin)
