"""F.affine_grid and F.grid_sample as the spatial-transformer tutorial uses them: a float32
localization net's θ, the grid, the sampled image and every gradient against PyTorch, and
torch's warnings and errors (each mode's values and gradients: tests/ops/test_conv.py)."""
import warnings

import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz
import gradviz.nn.functional as F


def _stn(lib, x, w):
    """The tutorial's transform: θ from a linear layer over the image, then affine_grid + grid_sample."""
    theta = (x.flatten(1) @ w).view(-1, 2, 3) + lib.tensor([[1.0, 0, 0], [0, 1, 0]])
    grid = lib.nn.functional.affine_grid(theta, list(x.size()), align_corners=False)
    return lib.nn.functional.grid_sample(x, grid, align_corners=False)


@needs_torch
def test_a_float32_spatial_transformer_matches_torch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 1, 6, 7)).astype(np.float32)
    w = (rng.standard_normal((42, 6)) * 0.05).astype(np.float32)
    ours = [gradviz.tensor(a, requires_grad=True) for a in (x, w)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    y, yt = _stn(gradviz, *ours), _stn(torch, *theirs)
    assert y.dtype == gradviz.float32 and y.grad_fn.name() == yt.grad_fn.name() == "GridSampler2DBackward0"
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    (y ** 2).sum().backward()
    (yt ** 2).sum().backward()
    for a, at in zip(ours, theirs):   # float32 sums of ~40 terms of size ~30: rounding order shows at 1e-4
        np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=1e-4, atol=1e-4)


# torch's CPU kernels, vectorized, contract a·b + c to one FMA; its unvectorized build does not
FUSED = pytest.mark.skipif(torch is None or torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"),
                           reason="torch's grid sampler rounds as gradviz's only where its build fuses products")


@needs_torch
@FUSED
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_the_grid_the_samples_and_the_grids_gradient_are_torchs_bit_for_bit(dtype, align_corners, padding_mode):
    """The base grid is torch's linspace, θ's products are added in bmm's order, positions and weights
    round as torch's kernel does (fused), and the grid's gradient sums the channels in its order."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 9, 11)).astype(dtype)
    theta = (np.array([[1.0, 0.1, 0.05], [-0.1, 0.9, 0.02]]) + rng.standard_normal((2, 2, 3))).astype(dtype)
    g_out = rng.standard_normal((2, 3, 7, 5)).astype(dtype)
    results = []
    for lib in (gradviz, torch):
        inputs = [lib.tensor(a, requires_grad=True) for a in (x, theta)]
        grid = lib.nn.functional.affine_grid(inputs[1], [2, 3, 7, 5], align_corners=align_corners)
        grid.retain_grad()
        y = lib.nn.functional.grid_sample(inputs[0], grid, padding_mode=padding_mode, align_corners=align_corners)
        y.backward(lib.tensor(g_out))
        results.append([t.detach().numpy() for t in (grid, y, grid.grad, inputs[0].grad, inputs[1].grad)])
    ours, theirs = results
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(ours[3:], theirs[3:]):   # scatter-adds and a BLAS product: the order of their sums differs
        np.testing.assert_allclose(a, b, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-5)


def _outcome(lib, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            eval(call, {"L": lib, "F": lib.nn.functional})
            error = None
        except Exception as e:
            error = (type(e).__name__, str(e))
    return error, [str(w.message) for w in caught]


CALLS = [
    "F.affine_grid(L.zeros(1, 2, 3), (1, 1, 2, 2))",
    "F.affine_grid(L.zeros(1, 2, 3), (1, 1, 1, 2), align_corners=True)",
    "F.affine_grid(L.zeros(1, 2, 3, dtype=L.int64), (1, 1, 2, 2), align_corners=False)",
    "F.affine_grid(L.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False)",
    "F.affine_grid(L.zeros(1, 2, 3), (1, 2, 2), align_corners=False)",
    "F.affine_grid(L.zeros(1, 2, 3), (1, 1, 0, 2), align_corners=False)",
    "F.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 2, 2, 2))",
    "F.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 2, 2, 2), mode='linear', align_corners=False)",
    "F.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 2, 2, 2), padding_mode='circular', align_corners=False)",
    "F.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 2, 2, 2, dtype=L.float64), align_corners=False)",
    "F.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 2, 2), align_corners=False)",
    "F.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(2, 2, 2, 2), align_corners=False)",
    "F.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 2, 2, 3), align_corners=False)",
    "F.grid_sample(L.zeros(1, 1, 2, 2, dtype=L.float64), L.zeros(1, 2, 2, 2), align_corners=False)",
    "F.grid_sample(L.zeros(1, 1, 2, 2, 2), L.zeros(1, 2, 2, 2), align_corners=False)",
    "F.grid_sample(L.zeros(1, 2, 2), L.zeros(1, 2, 2), align_corners=False)",
    "F.affine_grid(L.zeros(2, 2, 3), [1, 1, 2, 2], align_corners=False)",
]


@needs_torch
@pytest.mark.parametrize("call", CALLS)
def test_warnings_and_errors_match_torch(call):
    assert _outcome(gradviz, call) == _outcome(torch, call)


def test_nearest_gives_the_grid_no_gradient():
    x = gradviz.arange(12.0).view(1, 1, 3, 4)
    grid = gradviz.tensor([[[[0.1, -0.3], [0.7, 0.4]]]], requires_grad=True)
    F.grid_sample(x, grid, "nearest", align_corners=True).sum().backward()
    assert grid.grad.abs().sum().item() == 0


def test_a_gradient_of_grid_samples_gradient_says_it_is_not_implemented():
    x = gradviz.randn(1, 1, 3, 3, requires_grad=True)
    grid = gradviz.rand(1, 2, 2, 2, requires_grad=True)
    y = F.grid_sample(x, grid, align_corners=False)
    with pytest.raises(NotImplementedError, match="grid_sampler_2d's gradient"):
        gradviz.autograd.grad(y.sum(), (x, grid), create_graph=True)
