"""F.gumbel_softmax against torch's: the same Gumbel noise from the same seed (so the same samples
and the same random numbers after), torch's nodes, the straight-through gradient of hard=True,
and torch's deprecation warning for eps."""
import warnings

import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch


def run(torch, hard, dim):
    torch.manual_seed(0)
    logits = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard, dim=dim)
    (y * torch.arange(5.0, dtype=torch.float64)).sum().backward()
    return y.detach().numpy(), y.grad_fn.name(), logits.grad.numpy(), torch.rand(3).tolist()


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax_matches_torch(hard, dim):
    ours, theirs = run(gradviz, hard, dim), run(real_torch, hard, dim)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14, atol=0)   # softmax's last bit (its exp)
    assert ours[1] == theirs[1] and ours[3] == theirs[3]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12, atol=1e-15)


def test_eps_is_deprecated_as_in_torch():
    said = []
    for torch in (real_torch, gradviz):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.nn.functional.gumbel_softmax(torch.zeros(2, 3), eps=1e-3)
        said.append([(str(w.message), w.filename) for w in caught])
    assert said[0] == said[1] == [("`eps` parameter is deprecated and has no effect.", __file__)]
