"""histogram of a tensor that requires grad: torch gives both outputs one node (NotImplemented) that
fails in backward; without grad (or under no_grad) nothing is recorded. Compared with torch."""
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch


def program(torch) -> list:
    torch.manual_seed(0)
    x = torch.randn(10, requires_grad=True)
    h, e = torch.histogram(x, bins=4, density=True)
    seen = [h.grad_fn.name(), h.grad_fn is e.grad_fn, h.requires_grad, h.is_leaf, repr(h[:2]), repr(e)]
    seen.append(repr(torch.histogram(x, bins=3)))
    for out in (h, e):
        with pytest.raises(RuntimeError, match=r"^derivative for aten::histogram is not implemented$"):
            out.sum().backward()
    with torch.no_grad():
        seen.append(repr(torch.histogram(x, 3)))
    seen.append(torch.histogram(x.detach(), 3).hist.requires_grad)
    seen.append(repr(x.histogram(torch.tensor([-1.0, 0.0, 1.0]))))
    return seen


def test_histogram_records_torchs_node():
    assert program(gradviz) == program(real_torch)
