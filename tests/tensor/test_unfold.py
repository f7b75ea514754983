"""Tensor.unfold (a strided view, UnfoldBackward0) against finite differences and PyTorch 2.13:
values, strides, the base, first and second order gradients, node names and errors."""
import numpy as np
import pytest

import gradviz
from tests.ops.cases import OP_CASES
from tests.support.parity import needs_torch, real_torch

# the rows of group "unfold" (tests/ops/cases.py) run under gradcheck and against PyTorch with every other row
CASES = [(case.name, case.fn, case.inputs) for case in OP_CASES if case.group == "unfold"]


@pytest.mark.parametrize("name, prog, arrays", CASES, ids=[c[0] for c in CASES])
def test_unfold_gradgradcheck(name, prog, arrays):
    xs = tuple(gradviz.tensor(a, requires_grad=True) for a in arrays)
    assert gradviz.autograd.gradgradcheck(lambda *a: prog(gradviz, *a), xs)


@needs_torch
@pytest.mark.parametrize("name, prog, arrays", CASES, ids=[c[0] for c in CASES])
def test_unfold_matches_torch(name, prog, arrays):
    torch = real_torch
    seen = []
    for lib in (gradviz, torch):
        x = lib.tensor(arrays[0], requires_grad=True)
        out = prog(lib, x)
        (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        node = type(out.grad_fn.next_functions[0][0]).__name__   # out is unfold(...) ** 2
        seen.append((out.detach().numpy(), g.detach().numpy(), gg.numpy(), node, type(g.grad_fn).__name__))
    ours, theirs = seen
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert ours[3:] == theirs[3:]


@needs_torch
@pytest.mark.parametrize("shape, args", [((7,), (0, 3, 2)), ((3, 5), (1, 2, 1)), ((3, 5), (0, 3, 3)), ((), (0, 1, 1)),
                                         ((), (0, 0, 1)), ((2, 3, 4), (-1, 4, 4))])
def test_unfold_is_a_view_with_torchs_strides(shape, args):
    torch = real_torch
    data = np.arange(float(np.prod(shape))).reshape(shape)
    seen = []
    for lib in (gradviz, torch):
        x = lib.tensor(data)
        y = x.unfold(*args)
        seen.append((tuple(y.shape), y.stride(), y._base is x, repr(y)))
        if y.numel():
            y[(0,) * y.ndim] = -1.0              # a write through the view lands in the base
            seen.append(x.numpy().tolist())
    assert seen[:len(seen) // 2] == seen[len(seen) // 2:]


@needs_torch
@pytest.mark.parametrize("shape, args", [((7,), (0, 8, 1)), ((7,), (0, 3, 0)), ((7,), (0, -1, 1)), ((7,), (1, 2, 1)),
                                         ((7,), (-2, 2, 1)), ((7,), (0, 3, -1)), ((), (0, 2, 1)), ((), (1, 1, 1)),
                                         ((7,), (0, "a", 1)), ((7,), (0.5, 2, 1)), ((7,), (0, 2, None))])
def test_unfold_errors_in_torchs_words(shape, args):
    torch = real_torch
    seen = []
    for lib in (gradviz, torch):
        with pytest.raises(Exception) as info:
            lib.zeros(shape).unfold(*args)
        seen.append((type(info.value), str(info.value)))
    assert seen[0] == seen[1]


def test_unfold_is_a_method_only():
    """torch has Tensor.unfold but no torch.unfold (nn.functional.unfold is im2col)."""
    assert not hasattr(gradviz, "unfold")
    assert gradviz.nn.functional.unfold(gradviz.ones(1, 1, 3, 3), 2).shape == (1, 4, 4)
