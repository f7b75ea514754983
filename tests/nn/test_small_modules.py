"""LPPool1d/2d/3d, LocalResponseNorm, TripletMarginWithDistanceLoss (torch's compositions) and
ChannelShuffle against PyTorch: reprs, values, gradients and the output's node, and their errors."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz

RNG = np.random.default_rng(7)
X4 = RNG.standard_normal((2, 5, 6, 6))
X3 = RNG.standard_normal((2, 5, 7))
X5 = RNG.standard_normal((1, 4, 2, 3, 3))
A, P, N = (RNG.standard_normal((4, 3)) for _ in range(3))

CASES = [
    ("LPPool2d(2, 2)", [X4]),
    ("LPPool2d(1.5, (3, 2), stride=(2, 1), ceil_mode=True)", [np.abs(X4)]),
    ("LPPool2d(float('inf'), 2)", [X4]),
    ("LPPool3d(2, 2)", [X5]),
    ("LPPool3d(1.5, (2, 3, 2), stride=1, ceil_mode=True)", [np.abs(X5)]),
    ("LPPool3d(float('inf'), (1, 2, 2))", [X5[0]]),
    ("LPPool1d(3, 2)", [np.abs(X3)]),
    ("LPPool1d(2, 3, stride=1)", [X3]),
    ("LocalResponseNorm(2)", [X4]),
    ("LocalResponseNorm(3, alpha=0.1, beta=0.5, k=2.0)", [X3]),
    ("LocalResponseNorm(2, alpha=0.3)", [X5]),
    ("ChannelShuffle(2)", [X4[:, :4]]),
    ("TripletMarginWithDistanceLoss()", [A, P, N]),
    ("TripletMarginWithDistanceLoss(swap=True, margin=2.0, reduction='sum')", [A, P, N]),
    ("TripletMarginWithDistanceLoss(distance_function=L.nn.CosineSimilarity(), reduction='none')", [A, P, N]),
]


@needs_torch
@pytest.mark.parametrize("make,arrays", CASES, ids=[c[0] for c in CASES])
def test_module_matches_torch(make, arrays):
    results = []
    for lib in (gradviz, torch):
        m = eval("lib.nn." + make, {"lib": lib, "L": lib})
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = m(*xs)
        y.pow(2).sum().backward()
        results.append((repr(m), y.grad_fn.name(), y.detach().numpy(), [x.grad.numpy() for x in xs]))
    (r, name, y, grads), (rt, name_t, yt, grads_t) = results
    assert (r, name) == (rt, name_t)
    np.testing.assert_allclose(y, yt, rtol=1e-10, atol=1e-12)
    for g, gt in zip(grads, grads_t):
        np.testing.assert_allclose(g, gt, rtol=1e-8, atol=1e-10)


@needs_torch
@pytest.mark.parametrize("call", [
    "F.local_response_norm(L.ones(2, 3), 2)",
    "F.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3), margin=1.0)",
    "F.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), margin=0.0)",
    "F.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), reduction='avg')",
    "L.nn.TripletMarginWithDistanceLoss(margin=-1)",
    "F.channel_shuffle(L.ones(2, 5, 3), 2)",
    "F.channel_shuffle(L.ones(2, 6, 3), 0)",
    "F.channel_shuffle(L.ones(6, 3), 2)",
])
def test_errors_match_torch(call):
    outcomes = []
    for lib in (gradviz, torch):
        try:
            eval(call, {"F": lib.nn.functional, "L": lib})
            outcomes.append(None)
        except Exception as e:
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] is not None and outcomes[0] == outcomes[1]


@needs_torch
def test_an_empty_input_comes_back_as_it_is():
    x = gradviz.ones(0, 3, 4)
    assert gradviz.nn.functional.local_response_norm(x, 2) is x


@needs_torch
def test_channel_shuffles_gradient_is_a_channel_shuffle_as_in_torch():
    names = []
    for lib in (gradviz, torch):
        x = lib.tensor(np.concatenate([X4, X4[:, :1]], 1), requires_grad=True)   # 6 channels
        g, = lib.autograd.grad(lib.nn.functional.channel_shuffle(x, 3).pow(2).sum(), x, create_graph=True)
        names.append(g.grad_fn.name())
    assert names[0] == names[1] == "ChannelShuffleBackward0"
