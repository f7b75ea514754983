"""Tensor.apply_(callable) as torch's: one Python call per element, the result cast to the tensor's
dtype, an expanded tensor's shared memory visited once per element, a view writing its base, the
version left as it was, and torch's refusals (a tensor that requires grad, a result that is not a
number)."""
import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch


def outcome(fn):
    try:
        result = fn()
    except (RuntimeError, TypeError) as error:
        return type(error).__name__, str(error)
    return result.tolist(), str(result.dtype)


def cases(torch) -> list:
    base = torch.ones(2, 2)
    base[0].apply_(lambda v: v + 1)
    seen = []
    seen.append(torch.tensor([1.5, 2.5], dtype=torch.float64).apply_(lambda v: seen.append(type(v)) or v * 2).tolist())
    p = torch.ones(2, requires_grad=True)
    return seen + [outcome(fn) for fn in (
        lambda: torch.arange(4).apply_(lambda v: v * 1.7),
        lambda: torch.tensor([True, False]).apply_(lambda v: not v),
        lambda: torch.ones(2).expand(2, 2).apply_(lambda v: v + 1),
        lambda: torch.ones(2).apply_(lambda v: "x"),
        lambda: torch.ones(2).apply_(lambda v: None),
        lambda: p.apply_(lambda v: v * 2),
        lambda: (p * 1).apply_(lambda v: v * 2),
        lambda: p.detach().apply_(lambda v: v * 3),
    )] + [base.tolist(), base._version, p.tolist()]


def test_apply_matches_torch():
    assert cases(gradviz) == cases(real_torch)   # dtypes print as torch.int64 in both
