"""A float attention mask that requires grad gets its gradient, as in PyTorch (never a silent zero)."""
import numpy as np
import pytest

import gradviz as gv
from tests.support.parity import needs_torch

RNG = np.random.default_rng(3)
Q, K, V = (RNG.standard_normal((1, 2, 3, 4)) for _ in range(3))
M = RNG.standard_normal((3, 3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mask_gradient_matches_finite_differences(dtype):
    q, k, v = (gv.tensor(a, dtype=getattr(gv, dtype)) for a in (Q, K, V))
    m = gv.tensor(M, dtype=gv.float64, requires_grad=True)
    if dtype == "float64":
        f = lambda mask: gv.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum()
        assert gv.autograd.gradcheck(f, (m,))
    else:
        m32 = gv.tensor(M, dtype=gv.float32, requires_grad=True)
        gv.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m32).sum().backward()
        assert m32.grad is not None and np.abs(m32.grad.numpy()).sum() > 0


@needs_torch
@pytest.mark.torch
def test_mask_gradient_matches_torch():
    import torch
    out = {}
    for lib in (gv, torch):
        q, k, v = (lib.tensor(a, dtype=lib.float32) for a in (Q, K, V))
        m = lib.tensor(M, dtype=lib.float32, requires_grad=True)
        o = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)
        o.sum().backward()
        out[lib.__name__] = (o.detach().numpy(), m.grad.numpy(), o.grad_fn.name())
    np.testing.assert_allclose(out["gradviz"][0], out["torch"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["gradviz"][1], out["torch"][1], rtol=1e-5, atol=1e-6)
    assert out["gradviz"][2] == out["torch"][2]
