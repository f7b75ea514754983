"""Muon against torch.optim.Muon: its bfloat16 rounding, its Newton–Schulz iteration and its steps.

torch orthogonalises in bfloat16 with its own float32 accumulation order; gradviz rounds float32
to bfloat16 after each of the same operations. On small matrices every bit agrees; on larger ones
an occasional product lands the other side of a bfloat16 tie, and the iteration carries it on."""
import numpy as np
import pytest

import gradviz
from gradviz.optim._muon import DEFAULT_A, DEFAULT_B, DEFAULT_C, bfloat16_round, zeropower_via_newtonschulz

from tests.support.parity import needs_torch, real_torch as torch

pytestmark = [pytest.mark.torch, needs_torch]

COEFFICIENTS = (DEFAULT_A, DEFAULT_B, DEFAULT_C)


def test_bfloat16_round_is_torchs_cast():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    values = np.concatenate([bits.view(np.float32), np.float32([0.0, -0.0, np.inf, -np.inf, 1e-45, 3.4e38,
                                                                1.00390625, 1.01171875, -2.00781250])])
    finite = values[~np.isnan(values)]
    ours = bfloat16_round(finite)
    np.testing.assert_array_equal(ours, torch.tensor(finite).bfloat16().float().numpy())
    assert np.isnan(bfloat16_round(np.float32([np.nan]))).all()


@pytest.mark.parametrize("shape", [(3, 4), (4, 6), (6, 4), (8, 8), (64, 8)])
def test_newton_schulz_is_torchs_bit_for_bit_on_small_matrices(shape):
    from torch.optim._muon import _zeropower_via_newtonschulz
    rng = np.random.default_rng(1)
    for _ in range(10):
        g = rng.standard_normal(shape).astype(np.float32)
        theirs = _zeropower_via_newtonschulz(torch.tensor(g), COEFFICIENTS, 5, 1e-7).float().numpy()
        np.testing.assert_array_equal(zeropower_via_newtonschulz(g, COEFFICIENTS, 5, 1e-7), theirs)


def test_newton_schulz_on_larger_matrices_is_within_a_few_bfloat16_steps():
    """Measured over 100 random gradients each: 10×20 agrees bit for bit in 99, 32×32 in 90, 64×128
    in 10; the rest differ by at most 3.2% of the update's largest element (one bfloat16 step is
    0.4–0.8% of a value)."""
    from torch.optim._muon import _zeropower_via_newtonschulz
    rng = np.random.default_rng(1)
    for shape in [(10, 20), (32, 32), (64, 128), (128, 64)] * 5:
        g = rng.standard_normal(shape).astype(np.float32)
        theirs = _zeropower_via_newtonschulz(torch.tensor(g), COEFFICIENTS, 5, 1e-7).float().numpy()
        ours = zeropower_via_newtonschulz(g, COEFFICIENTS, 5, 1e-7)
        assert np.abs(ours - theirs).max() <= 0.04 * np.abs(theirs).max()


@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.02, weight_decay=0.01),
                                    dict(lr=0.05, nesterov=False, adjust_lr_fn="match_rms_adamw"),
                                    dict(lr=0.05, momentum=0.5, ns_steps=3, adjust_lr_fn="original")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_muon_steps_match_torch(kwargs, dtype):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(dtype) for s in [(4, 6), (6, 4), (8, 8)]]
    ours = [gradviz.nn.Parameter(gradviz.tensor(a)) for a in arrays]
    theirs = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    opt, ref = gradviz.optim.Muon(ours, **kwargs), torch.optim.Muon(theirs, **kwargs)
    # the orthogonalised updates agree bit for bit at these sizes; the parameters to torch's fused
    # multiply-adds in lerp and add (a unit in the last place on float64, as the other optimizers)
    tol = dict(rtol=1e-13, atol=1e-15) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    for _ in range(6):
        for p, q in zip(ours, theirs):
            g = rng.standard_normal(p.shape).astype(dtype)
            p.grad, q.grad = gradviz.tensor(g), torch.tensor(g)
        opt.step()
        ref.step()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **tol)
            assert list(opt.state[p]) == list(ref.state[q]) == ["momentum_buffer"]
            np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(),
                                       ref.state[q]["momentum_buffer"].numpy(), **tol)
    assert opt.param_groups[0].keys() == ref.param_groups[0].keys()
    assert repr(opt) == repr(ref)


@pytest.mark.parametrize("build,error,message", [
    (lambda t: t.optim.Muon([t.nn.Parameter(t.ones(3))]), ValueError,
     r"Muon only supports 2D parameters whereas we found a parameter with size: torch.Size\(\[3\]\)"),
    (lambda t: t.optim.Muon([t.nn.Parameter(t.ones(2, 2))], lr=-1), ValueError,
     "Learning rate should be >= 0 but is: -1"),
    (lambda t: t.optim.Muon([t.nn.Parameter(t.ones(2, 2))], momentum=-1), ValueError,
     "momentum should be >= 0 but is: -1"),
    (lambda t: t.optim.Muon([t.nn.Parameter(t.ones(2, 2))], weight_decay=-1), ValueError,
     "weight decay should be >= 0 but is: -1"),
    (lambda t: t.optim.Muon([t.nn.Parameter(t.ones(2, 2))], adjust_lr_fn="x"), ValueError,
     "Adjust learning rate function x is not supported"),
])
def test_muon_errors_match_torch(build, error, message):
    for t in (torch, gradviz):
        with pytest.raises(error, match=message):
            build(t)


def test_muon_ns_steps_limit_matches_torch():
    for t in (torch, gradviz):
        w = t.nn.Parameter(t.ones(2, 2))
        opt = t.optim.Muon([w], ns_steps=100)
        w.grad = t.ones(2, 2)
        with pytest.raises(ValueError, match="Number of steps must be less than 100 for computational efficiency"):
            opt.step()
