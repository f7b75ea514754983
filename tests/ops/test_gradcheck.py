"""Every op's VJP against central finite differences, in float64.

The cases are the rows of tests/ops/cases.py that ask for "gradcheck": a program over the
library and the shape and domain of each input (shapes (), (4,), (3, 4), (1, 4) for every
elementwise op, broadcast pairs for binary ones, the dims/keepdim/correction variants of the
reductions, fixed arrays for the rest). Domains keep inputs where the op is smooth: log/sqrt on
positives, abs/relu/sign away from 0, max/min on distinct values. The "gradgradcheck" rows check
second derivatives (create_graph=True) against finite differences of the first gradient.
"""
import numpy as np
import pytest
from tests.ops.cases import OpCase, select
from tests.support.op_inputs import PAIRS, SHAPES, rng_for, sample

import gradviz as torch
from gradviz.autograd import grad, gradcheck


def leaf(spec, rng):
    """A float64 leaf from (shape, domain), or from a fixed array."""
    return torch.tensor(sample(spec, rng), dtype=torch.float64, requires_grad=True)


def on_gradviz(case: OpCase):
    """The row's program over gradviz tensors."""
    return lambda *xs: case.fn(torch, *xs)


def check(fn, specs, seed_text="", **kw):
    rng = rng_for(seed_text)
    xs = tuple(leaf(s, rng) for s in specs)
    out = fn(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    # gradcheck skips outputs that do not require grad, so make sure the op recorded a node (an output
    # may be an input itself, as broadcast_tensors returns one that already has the shape)
    assert all(o.requires_grad for o in outs) and any(o.grad_fn is not None for o in outs), \
        "op did not record a grad_fn"
    assert all(o.dtype == torch.float64 for o in outs)
    assert gradcheck(fn, xs, **kw)


def params(cases, samples=False):
    """pytest params named by each row's group/name (and by its further inputs' number)."""
    if not samples:
        return [pytest.param(case, id=case.id) for case in cases]
    return [pytest.param(case, inputs, id=case.id if not i else f"{case.id}-{i}")
            for case in cases for i, inputs in enumerate((case.inputs, *case.more_inputs))]


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


# -- elementwise: every shape, every pair of shapes ----------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", params(select("gradcheck", "unary")))
def test_unary(case, shape):
    (domain,) = case.inputs
    check(on_gradviz(case), [(shape, domain)], f"{domain}{shape}")


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("case", params(select("gradcheck", "binary")))
def test_binary(case, shapes):
    sa, sb = shapes
    if case.name == "where_fixed_cond":   # the condition is (4,)
        try:
            np.broadcast_shapes(sa, sb, (4,))
        except ValueError:
            pytest.skip("condition (4,) does not broadcast with these shapes")
    da, db = case.inputs
    check(on_gradviz(case), [(sa, da), (sb, db)], f"{sa}{sb}")


# -- every other row: its inputs, and its further inputs ---------------------------------------
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case, inputs", params([c for c in select("gradcheck") if c.group not in ("unary", "binary")],
                                                samples=True))
def test_gradcheck(case, inputs):
    check(on_gradviz(case), inputs, str(inputs), **case.gradcheck)



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


@pytest.mark.parametrize("shapes", [((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                                    ((2, 1, 3, 4), (3, 4, 5))], ids=str)
@pytest.mark.parametrize("which", ["left", "right"])
def test_matmul_one_side_requires_grad(shapes, which):
    """matmul takes a different route when only one operand requires grad (as PyTorch's folding does)."""
    rng = np.random.default_rng(1)
    a = torch.tensor(rng.standard_normal(shapes[0]), dtype=torch.float64, requires_grad=which == "left")
    b = torch.tensor(rng.standard_normal(shapes[1]), dtype=torch.float64, requires_grad=which == "right")
    assert gradcheck(lambda a, b: a @ b, (a, b))


def test_T_of_3d_warns_as_in_torch():
    with pytest.warns(UserWarning, match="x.T` on tensors of dimension other than 2"):
        out = torch.zeros(2, 3, 4).T
    assert out.shape == (4, 3, 2)

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


@pytest.mark.parametrize("case", params(select("gradgradcheck")))
def test_second_order(case):
    gradgradcheck(on_gradviz(case), case.inputs, str(case.inputs))
