"""gradcheck's keyword arguments as torch's: a backward that answers differently each time is "not
reentrant" unless nondet_tol allows it (slow and fast mode), check_grad_dtypes, check_undefined_grad
(which calls the function again, as torch does), and the batched checks gradviz does not run."""
import pytest

import gradviz
from tests.support.parity import needs_torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]

DRIFTING = """
class Drifting(torch.autograd.Function):
    calls = 0
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        Drifting.calls += 1
        return g * 2 + Drifting.calls * 1e-4
x = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
"""


def test_a_backward_that_drifts_is_not_reentrant_unless_tolerated():
    same_output(DRIFTING, """
    for kw in [{}, {"nondet_tol": 1e-2}, {"fast_mode": True}, {"fast_mode": True, "nondet_tol": 1e-2},
               {"nondet_tol": 1e-2, "check_grad_dtypes": True, "masked": False}]:
        try:
            print(torch.autograd.gradcheck(Drifting.apply, (x,), atol=1e-2, **kw))
        except RuntimeError as e:
            print(type(e).__name__, e)
        print(torch.autograd.gradcheck(Drifting.apply, (x,), atol=1e-2, raise_exception=False, **kw))
    """)


def test_check_undefined_grad_calls_the_function_as_torch_does():
    same_output("""
    calls = []
    def f(a, b):
        calls.append(1)
        return a * b, a + b
    a = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([2.0, -1.0], dtype=torch.float64, requires_grad=True)
    print(torch.autograd.gradcheck(f, (a, b)), len(calls))
    calls.clear()
    print(torch.autograd.gradcheck(f, (a, b), check_undefined_grad=False), len(calls))
    """)


def test_the_batched_checks_are_refused_rather_than_skipped():
    x = gradviz.tensor([1.0], dtype=gradviz.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="batched-gradient checks"):
        gradviz.autograd.gradcheck(lambda t: t * 2, (x,), check_batched_grad=True)


def test_gradgradcheck_passes_the_options_on():
    same_output(DRIFTING, """
    def twice(t):
        return Drifting.apply(t) * t
    for kw in [{}, {"nondet_tol": 1.0}, {"check_undefined_grad": False, "check_grad_dtypes": True}]:
        print(torch.autograd.gradgradcheck(twice, (x,), atol=1e-2, raise_exception=False, **kw))
    """)
