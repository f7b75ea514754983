"""elu, selu and celu with inplace=True (and F.elu_, selu_, celu_) write their input and record torch's
result-reading nodes (EluBackward1, CeluBackward1), with torch's values (computed with expm1, as
torch's kernel: exp(x) - 1 lost half the digits of a small input)."""
import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch

CALLS = {
    "elu": lambda F, y: F.elu(y, inplace=True),
    "elu_alpha": lambda F, y: F.elu_(y, 0.5),
    "selu": lambda F, y: F.selu(y, inplace=True),
    "selu_": lambda F, y: F.selu_(y),
    "celu": lambda F, y: F.celu(y, 0.5, inplace=True),
    "celu_": lambda F, y: F.celu_(y),
    "ELU module": None,   # nn.ELU(0.7, inplace=True)
}


def run(torch, name):
    F = torch.nn.functional
    x = torch.tensor([-1.5, -0.25, 0.5, 2.0], requires_grad=True)
    y = x * 1
    if name == "ELU module":
        out = torch.nn.ELU(0.7, inplace=True)(y)
    else:
        out = CALLS[name](F, y)
    out.sum().backward()
    return [out is y, out.grad_fn.name(), y._version], [y.tolist(), x.grad.tolist()]


@pytest.mark.parametrize("name", CALLS)
def test_inplace_elu_family_matches_torch(name):
    (ours, our_values), (theirs, their_values) = run(gradviz, name), run(real_torch, name)
    assert ours == theirs
    # float32: NumPy's expm1 and torch's vectorised one differ in the last bit now and then, and the
    # gradient read from the result (c + α) / α cancels, so a last-bit difference there grows tenfold
    np.testing.assert_allclose(our_values[0], their_values[0], rtol=2e-7, atol=0)
    np.testing.assert_allclose(our_values[1], their_values[1], rtol=2e-6, atol=0)


def test_elu_of_a_small_input_keeps_its_digits():
    x = np.float32([-1e-4, -3e-6, -0.25])
    ours = gradviz.nn.functional.elu(gradviz.tensor(x)).numpy()
    np.testing.assert_allclose(ours, real_torch.nn.functional.elu(real_torch.tensor(x)).numpy(), rtol=2e-7)


def test_in_place_on_a_leaf_is_refused_as_torch():
    for torch in (real_torch, gradviz):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            torch.nn.functional.selu(torch.ones(2, requires_grad=True), inplace=True)
        with pytest.raises(TypeError, match=r"celu_\(\): argument 'input' \(position 1\) must be Tensor, not list"):
            torch.nn.functional.celu_([1.0])
