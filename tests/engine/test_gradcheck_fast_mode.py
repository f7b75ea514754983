"""gradcheck and gradgradcheck with fast_mode, as torch 2.13: the same verdicts, and a failure
prints torch's numbers (the random directions come from a fresh Generator, drawn as torch draws)."""
from __future__ import annotations

import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch, run_snippet

PROGRAMS = {
    "passes": """
x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
y = torch.randn(2, dtype=torch.float64, requires_grad=True)
for fast in (False, True):
    print(torch.autograd.gradcheck(lambda a, b: (a * b).sin().sum(0), (x, y), fast_mode=fast))
    print(torch.autograd.gradgradcheck(lambda a, b: (a * b).tanh(), (x, y), fast_mode=fast))
    print(torch.autograd.gradcheck(lambda a: (a.exp(), a.sum() * 2), (x,), fast_mode=fast))
""",
    "wrong backward": """
class Wrong(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a
    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * a * 2.1
x = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True)
for fast in (False, True):
    try:
        torch.autograd.gradcheck(Wrong.apply, (x,), fast_mode=fast)
    except Exception as e:
        print(type(e).__name__, e)
    print(torch.autograd.gradcheck(Wrong.apply, (x,), fast_mode=fast, raise_exception=False))
""",
    "slightly off": """
class SlightlyOff(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1.0
    @staticmethod
    def backward(ctx, g):
        return g * (1 + 3e-3 * torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64))
x = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True)
try:
    torch.autograd.gradcheck(SlightlyOff.apply, (x,), fast_mode=True)
except Exception as e:
    print(type(e).__name__, e)
""",
    "keyword-only tolerances": """
try:
    torch.autograd.gradcheck(lambda a: a, (torch.ones(2, dtype=torch.float64, requires_grad=True),), 1e-3)
except TypeError:
    print("TypeError")
""",
}


@needs_torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_gradcheck_fast_mode_prints_what_torch_prints(name):
    gradviz.manual_seed(0)
    real_torch.manual_seed(0)
    assert run_snippet(PROGRAMS[name], gradviz) == run_snippet(PROGRAMS[name], real_torch)


def test_fast_mode_leaves_the_learners_random_stream_alone():
    gradviz.manual_seed(3)
    expected = gradviz.rand(4)
    gradviz.manual_seed(3)
    x = gradviz.ones(3, dtype=gradviz.float64, requires_grad=True)
    assert gradviz.autograd.gradcheck(lambda a: a.exp(), (x,), fast_mode=True)
    assert gradviz.equal(gradviz.rand(4), expected)
