"""gradcheck's last check, as PyTorch 2.13's: a backward must be multiplied by its grad_output
(a zero grad_output gives zero gradients, of the input's dtype and size); check_backward_ad=False
skips the backward checks."""
import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch


def _functions(lib):
    """Square functions whose backward gets one thing wrong each (or nothing)."""
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class IgnoresGradOutput(Square):
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x

    class WrongDtype(Square):
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return (2 * x * g).float()

    return {"square": Square, "ignores_grad_output": IgnoresGradOutput, "wrong_dtype": WrongDtype}


def _gradcheck(lib, name, shape, **kwargs):
    fn = _functions(lib)[name]
    x = lib.tensor(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape), dtype=lib.float64, requires_grad=True)
    try:
        return lib.autograd.gradcheck(fn.apply, (x,), **kwargs)
    except Exception as error:   # torch's GradcheckError, gradviz's: compared by name and words
        return type(error).__name__, str(error)


CASES = [("square", (1,), {}), ("square", (3,), {}), ("ignores_grad_output", (1,), {}),
         ("ignores_grad_output", (1,), {"raise_exception": False}), ("ignores_grad_output", (1,), {"fast_mode": True}),
         ("ignores_grad_output", (1,), {"check_backward_ad": False}), ("wrong_dtype", (1,), {})]


@needs_torch
@pytest.mark.parametrize("name, shape, kwargs", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_gradcheck_checks_grad_output_as_torch_does(name, shape, kwargs):
    ours = _gradcheck(gradviz, name, shape, **kwargs)
    theirs = _gradcheck(real_torch, name, shape, **kwargs)
    assert ours == theirs


def test_a_backward_that_ignores_grad_output_fails_without_torch():
    with pytest.raises(RuntimeError, match=r"^backward not multiplied by grad_output$"):
        gradviz.autograd.gradcheck(_functions(gradviz)["ignores_grad_output"].apply,
                                   (gradviz.ones(1, dtype=gradviz.float64, requires_grad=True),))


def test_gradgradcheck_runs_it_on_the_vjp():
    x = gradviz.tensor([0.7, 1.3], dtype=gradviz.float64, requires_grad=True)
    assert gradviz.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,))


PROGRAMS = {   # (inputs' shapes, program): forward mode checked against finite differences
    "sin": ([(3,)], lambda t, x: x.sin()),
    "matmul": ([(2, 3), (3, 2)], lambda t, a, b: a @ b),
    "two_outputs": ([(4,)], lambda t, x: (x.exp(), (x * x).sum())),
    "softmax": ([(2, 3)], lambda t, x: t.softmax(x, -1)),
}


@needs_torch
@pytest.mark.parametrize("backward", [True, False])
@pytest.mark.parametrize("name", PROGRAMS)
def test_check_forward_ad_as_torchs(name, backward):
    shapes, program = PROGRAMS[name]
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(0.5, 1.5, s) for s in shapes]
    seen = []
    for lib in (gradviz, real_torch):
        xs = tuple(lib.tensor(a, requires_grad=True) for a in arrays)
        seen.append(lib.autograd.gradcheck(lambda *a: program(lib, *a), xs, check_forward_ad=True,
                                           check_backward_ad=backward))
    assert seen == [True, True]


@needs_torch
def test_forward_mode_mismatch_is_reported_in_torchs_words():
    """eps so large that the finite differences of exp miss its derivative: torch's message, numbers included."""
    seen = []
    for lib in (gradviz, real_torch):
        x = lib.tensor([0.3, 0.9], dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(lambda t: t.exp(), (x,), eps=0.5, check_forward_ad=True, check_backward_ad=False)
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]
    assert seen[0][1].startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0,")


@needs_torch
def test_neither_mode_is_torchs_assertion():
    seen = []
    for lib in (gradviz, real_torch):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        with pytest.raises(AssertionError) as info:
            lib.autograd.gradcheck(lambda t: t * 2, (x,), check_backward_ad=False)
        seen.append(str(info.value))
    assert seen[0] == seen[1]
