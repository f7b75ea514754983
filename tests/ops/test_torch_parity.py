"""The same programs run in gradviz and in PyTorch, from the same float64 inputs.

The cases are the rows of tests/ops/cases.py that ask for "parity" (and "parity_second",
"float32"), each written once against a module `t` (gradviz or torch), compared by the one
harness of tests/support/parity.py: the output values, shapes and dtypes, every leaf's .grad
after backward with the same seed gradient, and the whole grad_fn graph: node names,
next_functions edges (which node, which input_nr, None where an input needs no grad) and shared
nodes, down to the AccumulateGrad of each leaf. Also dtype promotion and a few error messages.
"""
import numpy as np
import pytest
from tests.ops.cases import F, select, set_item
from tests.support.op_inputs import PAIRS, SHAPES

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402
from tests.support.parity import (assert_matches_torch, assert_raises_as_torch,  # noqa: E402
                                  assert_second_derivatives_match_torch)

pytestmark = pytest.mark.torch

R = "real"


def params(cases, dtypes=False):
    """pytest params named by each row's group/name (and by the dtypes it runs in past the first)."""
    if not dtypes:
        return [pytest.param(case, id=case.id) for case in cases]
    return [pytest.param(case, dtype, id=case.id if dtype == case.dtypes[0] else f"{case.id}-{dtype}")
            for case in cases for dtype in case.dtypes]


# -- elementwise ops on every shape -------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", params(select("parity", "unary")))
def test_unary(case, shape):
    (domain,) = case.inputs
    assert_matches_torch(case.fn, [(shape, domain)], seed_text=f"{domain}{shape}")


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("case", params(select("parity", "binary")))
def test_binary(case, shapes):
    (da, db), (sa, sb) = case.inputs, shapes
    assert_matches_torch(case.fn, [(sa, da), (sb, db)], seed_text=str(shapes))


@pytest.mark.parametrize("which", ["left", "right"])
@pytest.mark.parametrize("case", params(select("parity", "binary")))
def test_binary_one_input_requires_grad(case, which):
    """next_functions has None for the input that needs no gradient."""
    da, db = case.inputs
    assert_matches_torch(case.fn, [((3, 4), da, which == "left"), ((4,), db, which == "right")], seed_text=which)


# -- every other row, in each of its dtypes -------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case, dtype", params([c for c in select("parity") if c.group not in ("unary", "binary")],
                                               dtypes=True))
def test_parity(case, dtype):
    assert_matches_torch(case.fn, case.inputs, seed_text=str(case.inputs), dtype=dtype, graph=case.graph,
                         **case.tol.get(dtype, {}))


def test_ties_and_kinks_match_torch():
    data = np.array([0.0, 1.0, 1.0, -1.0, 0.0])
    assert_matches_torch(lambda t, a: t.maximum(a, a.flip(0)) + t.relu(a) + t.abs(a) + a.max() + a.amax(0) + a.clamp(0, 1)
            + t.sign(a) + a.norm(p=float("inf")) + a.min(0).values, [data])
    assert_matches_torch(lambda t, a: a ** 2.5 + a.sqrt(), [np.array([0.0, 2.0])])


# -- reductions --------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [np.array([2.0, 0.0, 3.0]), np.array([[0.0, 2.0], [0.0, 0.0], [1.0, 3.0]])],
                         ids=["one_zero", "zeros"])
def test_prod_with_zeros(data):
    assert_matches_torch(lambda t, a: a.prod() + a.prod(0).sum() + a.prod(-1, keepdim=True).sum(), [data])


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
    assert_matches_torch(lambda t, a, b: a @ b, specs, seed_text=str(shapes))
    assert_matches_torch(lambda t, a, b: t.matmul(a, b).sum(-1).exp(), specs, seed_text="fn" + str(shapes))


def test_matmul_of_non_contiguous_batches():
    """should_fold looks at the strides: a transposed batch does not fold when the matrix needs no grad."""
    assert_matches_torch(lambda t, a, b: a.transpose(0, 1) @ b, [((3, 2, 4), R), ((4, 5), R, False)])
    assert_matches_torch(lambda t, a, b: a.transpose(1, 2) @ b, [((2, 4, 3), R), ((4, 5), R, False)])
    assert_matches_torch(lambda t, a, b: a.transpose(0, 1) @ b, [((3, 2, 4), R), ((4, 5), R)])


# -- second derivatives: grad of (vᵀ ∂f/∂x)·w, with create_graph=True, in both -------------------------
@pytest.mark.parametrize("case", params(select("parity_second")))
def test_second_derivatives(case):
    assert_second_derivatives_match_torch(case.fn, case.inputs, seed_text=str(case.inputs))


# -- float32 (the default dtype): values to float32 precision, dtypes of results and of .grad ----------
def _float32_inputs(case):
    if case.group == "unary":
        return [((3, 4), case.inputs[0])]
    if case.group == "binary":
        return [((3, 4), case.inputs[0]), ((4,), case.inputs[1])]
    return list(case.inputs)


@pytest.mark.parametrize("case", params(select("float32")))
def test_float32(case):
    specs = _float32_inputs(case)
    ours = assert_matches_torch(case.fn, specs, seed_text="f32" + str(specs), dtype="float32", rtol=1e-4, atol=1e-5,
                                grad_rtol=1e-3, grad_atol=1e-4, graph="none")
    assert all(g is None or g.dtype == np.float32 for g in ours["grads"])   # a leaf's .grad has the leaf's dtype


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
    ("b[0] = 1", lambda t, a: set_item(0, 1.0)(t, a), "CopySlices"),
    ("b[idx] = 1", lambda t, a: set_item(lambda t: t.tensor([0]), 1.0)(t, a), "IndexPutBackward0"),
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
    # lerp takes a zero-dim weight of any dtype, read in the operands' dtype (torch refuses any other)
    ("lerp, float64 0-d weight requiring grad", lambda t: t.lerp(t.tensor([1.0, 2.5, -3.0]), t.tensor([3.0, -1.0, 0.7]),
                                                                 t.tensor(0.3, dtype=t.float64, requires_grad=True))),
    ("lerp, int 0-d weight", lambda t: t.lerp(t.tensor([1.0, 2.5]), t.tensor([3.0, -1.0]), t.tensor(1))),
    ("lerp of 0-d tensors, float64 weight", lambda t: t.lerp(t.tensor(1.0), t.tensor(2.5), t.tensor(0.3, dtype=t.float64))),
]


@pytest.mark.parametrize("prog", [pytest.param(p, id=n) for n, p in DTYPE_PROGRAMS])
def test_dtype_promotion(prog):
    assert_matches_torch(prog, [], rtol=1e-6, graph="root")


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
    assert_raises_as_torch(prog)
