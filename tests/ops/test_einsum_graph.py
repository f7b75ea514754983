"""einsum and tensordot record PyTorch's own steps (ATen's einsum with no contraction path, left to right): for
each equation the grad_fn graph is torch's node for node (names, the dims each permute, sum and
unsqueeze saved, which leaf each AccumulateGrad is), and the values and gradients are torch's.
Contractions run as bmm, so no broadcast product of all the operands is ever made."""
import re

import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch, same_output, seed_gradient

pytestmark = needs_torch

SAVED = ("_saved_dims", "_saved_dim")   # what gradviz's nodes show of torch's saved dims

# (equation, operand shapes)
EQUATIONS = [
    ("ij,jk->ik", (3, 4), (4, 5)),                           # matmul
    ("ij,jk", (2, 3), (3, 2)),                               # implicit output
    ("bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
    ("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),         # attention scores
    ("bhqk,bhkd->bhqd", (2, 3, 4, 6), (2, 3, 6, 5)),         # attention output
    ("ij,jk->ki", (3, 4), (4, 5)),                           # the right operand's dims first: swapped for bmm
    ("ijk,ikl->jl", (2, 3, 4), (2, 4, 5)),
    ("i,j->ij", (3,), (4,)),                                 # outer: no contraction, a mul
    ("i,i->", (3,), (3,)),                                   # dot
    ("i,i->i", (3,), (3,)),
    ("ij,ij->", (2, 3), (2, 3)),
    ("i,j->", (3,), (4,)),                                   # each summed on its own first
    ("ii->", (3, 3)),                                        # trace
    ("ii", (3, 3)),
    ("ii->i", (3, 3)),                                       # diagonal
    ("iji->j", (3, 4, 3)),
    ("jii->ij", (4, 3, 3)),
    ("iijj->", (2, 2, 3, 3)),
    ("ij->ji", (3, 4)),                                      # transpose
    ("ij->", (3, 4)),                                        # sum
    ("ij->i", (3, 4)),
    ("", ()),
    ("i,->i", (3,), ()),
    ("bij,bjk,bkl->bil", (2, 3, 4), (2, 4, 5), (2, 5, 6)),   # three operands
    ("ij,jk,kl,lm->im", (2, 3), (3, 4), (4, 5), (5, 2)),
    ("i,j,k->ijk", (2,), (3,), (4,)),
    ("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5)),
    ("...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 6)),         # ellipsis, broadcast
    ("...ij,...jk", (2, 3, 4), (4, 6)),
    ("...i,...i->...", (5, 1, 3), (4, 3)),
    ("...ii->...i", (2, 3, 3)),
    ("i...->...", (3, 2)),
    ("...->", (2, 3)),
    ("iij,jk->ik", (3, 3, 4), (4, 5)),                       # a repeated letter beside another operand
    ("ii,ii->i", (3, 3), (3, 3)),
    ("ij,jk->ik", (3, 1), (1, 5)),                           # dims of size 1
    ("ij,jk->ik", (1, 4), (4, 1)),
    ("ij,jk->ik", (3, 4), (1, 5)),
    ("ij,ij->ij", (1, 3), (2, 3)),
    ("ijk,jk->ij", (2, 3, 4), (1, 4)),
    ("bij,bkj->bik", (1, 3, 4), (5, 2, 4)),
    ("ij,j->i", (0, 3), (3,)),                               # no elements
    ("Ab,bA->A", (3, 2), (2, 3)),                            # capitals order before small letters
    ("n i, n j -> n i j", (3, 2), (3, 4)),                   # spaces
]


def _tree(node, leaves) -> str:
    """The graph under node, depth first: each node's name, the dims it saved, its inputs."""
    if node is None:
        return "None"
    name = node.name().replace("torch::autograd::", "")
    if name == "AccumulateGrad":
        return f"x{next(i for i, x in enumerate(leaves) if x is node.variable)}"
    saved = [f"{attr}={tuple(v) if isinstance(v, (list, tuple)) else v}" for attr in SAVED
             if (v := getattr(node, attr, None)) is not None]
    return f"{name}[{' '.join(saved)}](" + ", ".join(_tree(n, leaves) for n, _ in node.next_functions) + ")"


def _run(t, equation, arrays, dtype, contract=None):
    xs = [t.tensor(a, dtype=getattr(t, dtype), requires_grad=True) for a in arrays]
    out = t.einsum(equation, *xs) if contract is None else contract(t, *xs)
    tree = _tree(out.grad_fn, xs)
    out.backward(t.tensor(seed_gradient(tuple(out.shape)), dtype=out.dtype))
    return tree, out.detach().numpy(), [x.grad.numpy() for x in xs]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", EQUATIONS, ids=[f"{e[0] or 'scalar'}{list(e[1:])}" for e in EQUATIONS])
def test_einsum_records_torchs_graph(case, dtype):
    equation, *shapes = case
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    theirs, ours = _run(real_torch, equation, arrays, dtype), _run(gradviz, equation, arrays, dtype)
    assert ours[0] == theirs[0]
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == "float64" else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], **tol)
    assert ours[1].dtype == theirs[1].dtype
    for g, h in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(g, h, **tol)


def test_attention_contracts_by_bmm():
    """The scores' graph is one bmm of two views: no product of all the operands to sum."""
    q = gradviz.ones(2, 3, 4, 5, requires_grad=True)
    k = gradviz.ones(2, 3, 6, 5, requires_grad=True)
    names = _tree(gradviz.einsum("bhqd,bhkd->bhqk", q, k).grad_fn, [q, k])
    assert "BmmBackward0" in names and "MulBackward0" not in names and "SumBackward1" not in names


def test_einsum_dtypes_are_bmms():
    """A contraction is a bmm: integers keep their dtype, and mixed dtypes raise bmm's words (the
    operands named in bmm's order); a product with nothing to sum is a mul, which promotes."""
    same_output("""
        for eq, a, b in [("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 4, dtype=torch.float64)),
                         ("ij,jk->ki", torch.ones(2, 3), torch.ones(3, 4, dtype=torch.float64)),
                         ("i,j->ij", torch.ones(2), torch.ones(3, dtype=torch.float64)),
                         ("ij,jk->ik", torch.ones(2, 3, dtype=torch.int32), torch.ones(3, 4, dtype=torch.int32))]:
            try:
                r = torch.einsum(eq, a, b)
                print(eq, r.dtype, r.tolist())
            except RuntimeError as e:
                print(eq, e)
        print(torch.einsum("ii->", torch.ones(2, 2, dtype=torch.int32)).dtype)
    """)


# (operand shapes, dims): a full contraction is one dot where both operands flatten as views, else mul + sum
TENSORDOTS = [((2, 3), (3,), 1), ((3,), (3, 4), 1), ((2, 3, 4), (3, 4), 2), ((2, 3), (2, 3), 2), ((3,), (3,), 1),
              ((2, 3), (3, 2), ([0, 1], [1, 0])), ((2, 3), (2, 3), ([1, 0], [1, 0])), ((1, 3), (3,), ([1], [0])),
              ((3, 1), (3, 1), ([0], [0])), ((2, 1, 3), (2, 3), ([0, 2], [0, 1])), ((4,), (1,), 1), ((0,), (0,), 1)]


@pytest.mark.parametrize("case", TENSORDOTS, ids=[f"{a}x{b}:{d}" for a, b, d in TENSORDOTS])
def test_tensordot_records_torchs_graph(case):
    a, b, dims = case
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(a), rng.standard_normal(b)]
    contract = lambda t, x, y: t.tensordot(x, y, dims)   # noqa: E731
    theirs, ours = (_run(t, "", arrays, "float64", contract) for t in (real_torch, gradviz))
    # names and leaves only: torch's permute keeps tensordot's dims as given, and prints -1 as 2**64 - 1
    assert re.sub(r"\[[^]]*\]", "", ours[0]) == re.sub(r"\[[^]]*\]", "", theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    for g, h in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-12)
