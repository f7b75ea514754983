"""gradgradcheck draws its random output gradients as torch's does (torch.testing.make_tensor: uniform
in [-1, 1) from the global generator, from a last axis twice as long when non-contiguous), so a
program's random numbers after it are torch's; gradcheck's finite differences are taken in the
output's dtype, as torch's (a float32 Jacobian prints as float32)."""
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch

FUNCTIONS = [lambda t, x: x ** 3, lambda t, x: x @ x.T, lambda t, x: (x.sum(), x.sin()), lambda t, x: x[0] * 2]


@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("f", range(len(FUNCTIONS)))
def test_gradgradcheck_moves_the_random_stream_as_torch(f, noncontiguous):
    drawn = []
    for torch in (real_torch, gradviz):
        torch.manual_seed(0)
        x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradgradcheck(lambda x: FUNCTIONS[f](torch, x), (x,),
                                            gen_non_contig_grad_outputs=noncontiguous)
        drawn.append(torch.rand(5).tolist() + torch.randn(3).tolist())
    assert drawn[0] == drawn[1]


@pytest.mark.filterwarnings("ignore:Input #0 requires gradient and is not a double precision")
def test_float32_gradcheck_reports_float32_jacobians():
    said = []
    for torch in (real_torch, gradviz):
        x = torch.tensor([0.25, -0.5], requires_grad=True)
        with pytest.raises(RuntimeError, match="Jacobian mismatch") as info:
            torch.autograd.gradcheck(lambda t: (t * 3).exp() * 100, (x,))
        said.append(str(info.value))
    assert "dtype" not in said[0] and "dtype" not in said[1]
    assert said[0].splitlines()[0] == said[1].splitlines()[0]
