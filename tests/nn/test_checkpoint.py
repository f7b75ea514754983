"""torch.utils.checkpoint against torch: both variants give the gradients a plain run gives (dropout
inside draws the same numbers again), the reentrant one records CheckpointFunctionBackward and refuses
autograd.grad, the other keeps the function's own graph; checkpoint_sequential; torch's warnings and
errors."""
import pytest

from tests.support.parity import needs_torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]

SETUP = """
torch.manual_seed(0)
block = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Dropout(0.5), torch.nn.Linear(8, 3))
block = block.double()
x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
def grads():
    out = [x.grad.clone()] + [p.grad.clone() for p in block.parameters()]
    block.zero_grad()
    x.grad = None
    return out
torch.manual_seed(1)
(block(x) ** 2).sum().backward()
plain = grads()
"""


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpointed_gradients_are_the_plain_ones(reentrant):
    same_output(SETUP, f"""
    torch.manual_seed(1)
    y = torch.utils.checkpoint.checkpoint(block, x, use_reentrant={reentrant})
    print(y.grad_fn.name())
    (y ** 2).sum().backward()
    print([torch.allclose(a, b) for a, b in zip(plain, grads())])
    torch.manual_seed(1)
    y = torch.utils.checkpoint.checkpoint_sequential(block, 2, x, use_reentrant={reentrant})
    (y ** 2).sum().backward()
    print(y.grad_fn.name(), [torch.allclose(a, b) for a, b in zip(plain, grads())])
    print(torch.rand(1))   # the random stream goes on from where the plain run left it
    """)


def test_warnings_and_errors_match_torch():
    same_output(SETUP, """
    f = lambda t: t.exp() * 2
    print(torch.utils.checkpoint.checkpoint(f, torch.ones(2), use_reentrant=True))
    y = torch.utils.checkpoint.checkpoint(f, x)
    print(y.grad_fn.name())
    try:
        torch.autograd.grad(y.sum(), x)
    except RuntimeError as e:
        print(e)
    for kw in [{"foo": 1}, {"debug": True}]:
        try:
            torch.utils.checkpoint.checkpoint(f, x, use_reentrant=True, **kw)
        except ValueError as e:
            print(e)
    print(torch.utils.checkpoint.checkpoint(f, x, use_reentrant=False, preserve_rng_state=False).grad_fn.name())
    print(torch.autograd.grad(torch.utils.checkpoint.checkpoint(f, x, use_reentrant=False).sum(), x)[0][0])
    print(torch.utils.checkpoint.detach_variable((x, 3))[0].requires_grad)
    """)
