"""The hook-based nn.utils.weight_norm and nn.utils.spectral_norm against PyTorch from the same
seed: parameter and buffer names, power-iteration state over several training steps, eval mode,
values, gradients, removal, the deprecation warning and the errors."""
import warnings

import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz


def _spectral(lib, make):
    lib.manual_seed(0)
    m = lib.nn.utils.spectral_norm(make(lib))
    x = lib.randn(3, *((2, 4, 4) if isinstance(m, lib.nn.modules.conv._ConvNd) else (5,)))
    seen = [list(m.state_dict()), [n for n, _ in m.named_parameters()]]
    for _ in range(3):   # each training forward advances u and v
        y = m(x)
    y.pow(2).sum().backward()
    seen += [y.detach().numpy(), m.weight.grad_fn.name(), m.weight_u.numpy().copy(), m.weight_v.numpy().copy(),
             m.weight_orig.grad.numpy()]
    m.eval()
    seen += [m(x).detach().numpy(), m.weight_u.numpy().copy()]   # eval: no step
    lib.nn.utils.remove_spectral_norm(m)
    seen += [list(m.state_dict()), m.weight.detach().numpy(), type(m.weight).__name__]
    return seen


@needs_torch
@pytest.mark.parametrize("make", [lambda L: L.nn.Linear(5, 4), lambda L: L.nn.Conv2d(2, 3, 2),
                                  lambda L: L.nn.ConvTranspose2d(2, 3, 2)], ids=["linear", "conv", "conv_transpose"])
def test_spectral_norm_matches_torch(make):
    ours, theirs = _spectral(gradviz, make), _spectral(torch, make)
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
        else:
            assert a == b


def _weight_norm(lib, dim):
    lib.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2), dim=dim)
    y = m(lib.ones(4, 3))
    y.pow(2).sum().backward()
    seen = [[(str(w.message), w.category) for w in caught], repr(m), list(m.state_dict()), m.weight.grad_fn.name(),
            y.detach().numpy(), m.weight_g.grad.numpy(), m.weight_v.grad.numpy()]
    lib.nn.utils.remove_weight_norm(m)
    return seen + [list(m.state_dict()), m.weight.detach().numpy(), type(m.weight).__name__]


@needs_torch
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(dim):
    ours, theirs = _weight_norm(gradviz, dim), _weight_norm(torch, dim)
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert a == b


@needs_torch
@pytest.mark.parametrize("call", [
    "U.remove_weight_norm(L.nn.Linear(3, 2))",
    "U.remove_spectral_norm(L.nn.Linear(3, 2))",
    "U.spectral_norm(U.spectral_norm(L.nn.Linear(2, 2)))",
    "U.spectral_norm(L.nn.Linear(2, 2), n_power_iterations=0)",
    "U.spectral_norm(L.nn.Linear(2, 2, bias=False), name='bias')",
    "U.weight_norm(U.weight_norm(L.nn.Linear(2, 2)))",
])
def test_errors_match_torch(call):
    outcomes = []
    for lib in (gradviz, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            try:
                eval(call, {"U": lib.nn.utils, "L": lib})
                outcomes.append(None)
            except Exception as e:
                outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] is not None and outcomes[0] == outcomes[1]
