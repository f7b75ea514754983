"""Hardswish and Hardsigmoid with inplace=True write their input, as torch's hardswish_ and
hardsigmoid_ do, and record torch's node with the input's own gradient; a leaf is refused."""
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch


def run(torch, name):
    module = getattr(torch.nn, name)(inplace=True)
    x = torch.tensor([-4.0, -1.0, 0.5, 3.5], requires_grad=True)
    y = x * 2
    out = module(y)
    out.backward(torch.ones(4))
    seen = [repr(module), out is y, y.tolist(), x.grad.tolist(), out.grad_fn.name(), y._version]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        module(torch.ones(2, requires_grad=True))
    return seen


@pytest.mark.parametrize("name", ["Hardswish", "Hardsigmoid"])
def test_inplace_hard_activation_matches_torch(name):
    assert run(gradviz, name) == run(real_torch, name)
