"""Convolutions, pools, window views and resampling: second derivatives, errors, indices and ties.

Their rows (groups "conv", "pool" and "resample" of tests/ops/cases.py) run under gradcheck and
against PyTorch with every other row; the grids cover stride, padding, dilation, groups and
ceil_mode with a representative set, not every product.
"""
import numpy as np
import pytest
from tests.ops.cases import CONV_RNG as RNG, D2, W2S, X2S, find
from tests.support.parity import leaf, needs_torch, real_torch as torch

import gradviz
import gradviz.nn.functional as F
from gradviz.autograd import gradcheck

# every VJP record once: the convolution's two adjoints, and the adjoint of each linear map
SECOND_ORDER = ["conv2d_same", "conv1d_depthwise", "conv_transpose2d_groups_dilation",
                "conv_transpose2d_output_pad_dilation", "avg_pool2d_pad", "max_pool2d_stride_pad", "unfold_all",
                "fold_overlap", "affine_grid", "avg_pool3d", "max_unpool2d", "max_pool3d_overlap_pad_dilation", "upsample_bilinear", "upsample_linear1d", "upsample_nearest", "adaptive_avg_pool2d",
                "adaptive_max_pool2d", "pad_reflect", "pad_replicate", "pixel_shuffle", "pixel_unshuffle",
                "channel_shuffle"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order(name):
    """The VJPs run on Tensors (create_graph=True): the first gradients' gradient, with respect to
    the inputs and to the seed ḡ (the only dependence a linear map's gradient has), matches
    finite differences."""
    case = find(name, "conv", "pool", "resample")
    prog, arrays = case.fn, case.inputs
    # one sample and two channels keep finite differences cheap (all channels where they are structure)
    xs = tuple(leaf(gradviz, a if name.startswith("conv") or a.ndim < 4 else a[:1] if name.startswith("pixel")
                    else a[:1, :2]) for a in arrays)
    seed = leaf(gradviz, np.random.default_rng(5).standard_normal(tuple(prog(gradviz, *xs).shape)))

    def first_grads(*a):
        with gradviz.enable_grad():   # gradcheck takes its finite differences under no_grad
            out = prog(gradviz, *a[:-1])
            grads = gradviz.autograd.grad(out, a[:-1], a[-1], create_graph=True)
            return sum((g * g).sum() for g in grads)
    assert first_grads(*xs, seed).requires_grad, "create_graph=True gave a gradient without a graph"
    assert gradcheck(first_grads, xs + (seed,))


@pytest.mark.parametrize("call,message", [
    (lambda: F.conv2d(gradviz.ones(1, 3, 5, 5), gradviz.ones(2, 2, 3, 3)),
     r"Given groups=1, weight of size \[2, 2, 3, 3\], expected input\[1, 3, 5, 5\] to have 2 channels, but got 3"),
    (lambda: F.conv2d(gradviz.ones(1, 2, 2, 2), gradviz.ones(2, 2, 3, 3)),
     r"Calculated padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\). Kernel size can't be greater"),
    (lambda: F.conv2d(gradviz.ones(1, 2, 5, 5), gradviz.ones(2, 2, 3, 3), stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(gradviz.ones(1, 4, 5, 5), gradviz.ones(3, 2, 3, 3), groups=2),
     r"Given groups=2, expected weight to be divisible by 2 at dimension 0"),
    (lambda: F.conv2d(gradviz.ones(5, 5), gradviz.ones(2, 2, 3, 3)),
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: \[5, 5\]"),
    (lambda: F.max_pool2d(gradviz.ones(1, 1, 4, 4), 2, padding=2),
     "pad should be at most half of effective kernel size"),
])
def test_errors_in_pytorch_words(call, message):
    with pytest.raises((RuntimeError, ValueError), match=message):
        call()


@needs_torch
def test_max_pool_indices_match_torch():
    ours_out, ours_idx = F.max_pool2d(gradviz.tensor(D2), 3, 2, 1, return_indices=True)
    theirs_out, theirs_idx = torch.nn.functional.max_pool2d(torch.tensor(D2), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(ours_idx.numpy(), theirs_idx.numpy())
    np.testing.assert_array_equal(ours_out.numpy(), theirs_out.numpy())
    assert ours_idx.dtype == gradviz.int64 and ours_idx.grad_fn is None


def test_convolution_op_record_shows_its_vjp():
    """The record carries the correlation's formula and the flipped-kernel correlation as its VJP text
    (the Unicode derived from the record's LaTeX)."""
    y = F.conv2d(leaf(gradviz, X2S), leaf(gradviz, W2S))
    op = y.grad_fn.op
    assert y.grad_fn.name() == "ConvolutionBackward0"
    assert op.formula.startswith("y = x ⋆ W + b: y[n, o, p] = b[o] + Σ")
    assert "ḡ ⋆ flip(W)" in op.vjp_formulas[0] and op.vjp_formulas[1].startswith("Σₙ xₙ ⋆ ḡₙ")
    assert y.grad_fn._saved_stride == (1, 1) and y.grad_fn._saved_groups == 1


def test_conv_float32_stays_float32():
    x = gradviz.randn(2, 3, 8, 8, requires_grad=True)
    w = gradviz.randn(4, 3, 3, 3, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    y.sum().backward()
    assert y.dtype == x.grad.dtype == w.grad.dtype == gradviz.float32


@needs_torch
@pytest.mark.parametrize("args", [(2,), (3, 2, 1), ((2, 3), 1, 0, (1, 2))], ids=["tiles", "pad", "overlap_dilation"])
def test_max_pool_ties_pick_the_first_window_position_as_torch(args):
    """Ties (ReLU's zeros, repeated values) go to the first position of the window in row-major
    order: its index and so its gradient."""
    x = np.random.default_rng(5).integers(-1, 3, (2, 3, 7, 8)).astype(np.float32)
    ours = gradviz.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(ours.relu(), *args, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(theirs.relu(), *args, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    g = np.random.default_rng(6).standard_normal(t_out.shape).astype(np.float32)
    out.backward(gradviz.tensor(g))
    t_out.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)   # overlaps add


@needs_torch
@pytest.mark.parametrize("args", [(1,), (3,), (3, 1, 1), ((2, 3), 2, 0, (2, 1), True), ((2, 3), 2, 1, (2, 1), True)],
                         ids=["one_tap", "nine_taps", "overlap_pad", "dilation_ceil", "dilation_ceil_pad"])
def test_max_pool_first_maximum_with_signed_zeros_infinities_and_nan_as_torch(args):
    """Each window's index is its first maximum as torch picks it where the window holds −0 and +0
    (equal: the first of them), ±inf, or NaN (its last NaN); a window whose inside is all −inf takes
    its first inside position, never the padding."""
    rng = np.random.default_rng(7)
    x = rng.integers(-1, 2, (2, 3, 9, 10)).astype(np.float32)
    x[x == 0] = np.where(rng.random(int((x == 0).sum())) < 0.5, -0.0, 0.0)
    flat = x.reshape(-1)
    flat[::23], flat[::17], flat[::19] = np.nan, np.inf, -np.inf
    out, idx = F.max_pool2d(gradviz.tensor(x), *args, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(x), *args, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    np.testing.assert_array_equal(np.signbit(out.numpy()), np.signbit(t_out.numpy()))
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())


@needs_torch
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_max_pool_of_negative_integers_never_takes_the_padding(dtype):
    """Integers are padded with their dtype's least value, and a window whose inside holds only that
    value takes its first inside position, as torch (a 0 padding beat negative entries and indexed
    outside the plane)."""
    x = np.concatenate([-np.arange(1, 17), np.full(16, np.iinfo(dtype).min)]).reshape(1, 2, 4, 4).astype(dtype)
    out, idx = F.max_pool2d(gradviz.tensor(x), 2, 2, 1, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(x), 2, 2, 1, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())


@needs_torch
def test_max_pool_gradient_goes_to_a_window_s_last_nan_as_torch():
    x = np.round(np.random.default_rng(8).standard_normal((2, 3, 8, 8)) * 2).astype(np.float32)
    x.reshape(-1)[np.random.default_rng(9).random(x.size) < 0.3] = np.nan
    ours, theirs = gradviz.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.max_pool2d(ours, 3, 1, 1).sum().backward()
    torch.nn.functional.max_pool2d(theirs, 3, 1, 1).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@needs_torch
@pytest.mark.parametrize("padding", [0, 1])
def test_conv_on_an_empty_batch(padding):
    x, w = np.zeros((0, 4, 5, 6)), RNG.standard_normal((6, 2, 3, 3))
    ours, theirs = [(leaf(t, x), leaf(t, w)) for t in (gradviz, torch)]
    y = F.conv2d(*ours, padding=padding, groups=2)
    t_y = torch.nn.functional.conv2d(*theirs, padding=padding, groups=2)
    assert tuple(y.shape) == tuple(t_y.shape)
    y.sum().backward()
    t_y.sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())



@pytest.mark.parametrize("padding, dilation, groups", [(1, 1, 1), (0, 2, 2)])
def test_im2col_in_chunks_gives_the_same_bits(monkeypatch, padding, dilation, groups):
    """A stride-1 convolution makes its im2col matrix a few samples at a time: the output and both
    gradients are the same bit for bit whatever the chunks."""
    from gradviz.ops import conv

    rng = np.random.default_rng(12)
    x, w = rng.standard_normal((7, 4, 9, 8)).astype(np.float32), rng.standard_normal((6, 4 // groups, 3, 3))
    b = rng.standard_normal(6)

    def run():
        xs, ws = gradviz.tensor(x, requires_grad=True), gradviz.tensor(w.astype(np.float32), requires_grad=True)
        y = F.conv2d(xs, ws, gradviz.tensor(b.astype(np.float32)), padding=padding, dilation=dilation, groups=groups)
        y.backward(gradviz.tensor(rng.standard_normal(tuple(y.shape)).astype(np.float32)))
        return [y.detach().numpy(), xs.grad.numpy(), ws.grad.numpy()]

    results = []
    for chunk in (1, 30_000, 1 << 30):   # bytes: one sample per chunk, a few (2 or 5 here), all seven
        monkeypatch.setattr(conv, "CHUNK_BYTES", chunk)
        rng = np.random.default_rng(13)
        results.append(run())
    for other in results[1:]:
        for u, v in zip(results[0], other):
            np.testing.assert_array_equal(u, v)


@needs_torch
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("where", ["input", "weight"])
def test_an_infinite_input_or_weight_gives_torchs_gradients(dims, where):
    # the wide layout's positions between output rows meet ḡ's zeros: 0 · inf there must not reach a
    # gradient (it made NaN where torch's is finite)
    rng = np.random.default_rng(dims)
    x, w = rng.standard_normal((2, 2) + (6,) * dims), rng.standard_normal((3, 2) + (3,) * dims)
    (x if where == "input" else w)[(0, 1) + (2,) + (0,) * (dims - 1)] = np.inf
    g = rng.standard_normal((2, 3) + (4,) * dims)
    g[..., 0] = 0.0   # zeros beside the inf, as a real ḡ has them
    grads = []
    for lib in (gradviz, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        getattr(lib.nn.functional, f"conv{dims}d")(xt, wt).backward(lib.tensor(g))
        grads.append((np.asarray(xt.grad.detach() if lib is torch else xt.grad),
                      np.asarray(wt.grad.detach() if lib is torch else wt.grad)))
    for ours, theirs in zip(*grads):
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
