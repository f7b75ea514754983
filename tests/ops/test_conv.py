"""Convolutions, pools, window views and resampling against finite differences and torch.

Each case is a program over (library, its functional module, *inputs): gradviz runs it
under gradcheck (float64), and both libraries run it from the same inputs and seed
gradient, comparing values, every input's .grad, the output's grad_fn name and, where
PyTorch records one node, the whole graph with its edges. The grids cover stride,
padding, dilation, groups and ceil_mode with a representative set, not every product.
"""
import warnings

import numpy as np
import pytest
from tests.support.parity import assert_program_matches_torch, case_ids, leaf, needs_torch, real_torch as torch

import gradviz
import gradviz.nn.functional as F
from gradviz.autograd import gradcheck

RNG = np.random.default_rng(11)
X2 = RNG.standard_normal((2, 4, 7, 6))
X2S = RNG.standard_normal((1, 2, 5, 5))          # small: gradcheck costs one backward per output
X1 = RNG.standard_normal((2, 4, 9))
X3S = RNG.standard_normal((1, 1, 2, 3, 3))        # volumetric (N, C, D, H, W)
W2 = RNG.standard_normal((6, 4, 3, 2))
W2G = RNG.standard_normal((6, 2, 3, 3))          # groups=2
W2S = RNG.standard_normal((3, 2, 3, 3))
W2E = RNG.standard_normal((3, 2, 2, 2))          # an even kernel: 'same' pads asymmetrically
W1 = RNG.standard_normal((3, 4, 3))
W1G = RNG.standard_normal((4, 1, 2))             # depthwise: groups = channels
B6, B3, B4 = RNG.standard_normal(6), RNG.standard_normal(3), RNG.standard_normal(4)
# distinct values, so no max-pool window has a tie (finite differences need a unique winner)
D2 = RNG.permutation(np.linspace(-3, 3, 2 * 3 * 7 * 6)).reshape(2, 3, 7, 6)
D1 = RNG.permutation(np.linspace(-3, 3, 2 * 3 * 11)).reshape(2, 3, 11)
THETA = RNG.standard_normal((2, 2, 3)) * 0.8
GRID = RNG.uniform(-1.3, 1.3, (1, 3, 4, 2))     # beyond ±1 too: the padding modes decide those
D3 = RNG.permutation(np.linspace(-3, 3, 2 * 3 * 4 * 5)).reshape(1, 2, 3, 4, 5)
COLS = RNG.standard_normal((2, 3 * 4, 6))
COLS8 = RNG.standard_normal((2, 3 * 4, 8))
WT2 = RNG.standard_normal((2, 3, 2, 2))          # transposed: (in, out / groups, *k)
WT2G = RNG.standard_normal((2, 2, 3, 2))         # transposed, groups=2
WT1 = RNG.standard_normal((4, 2, 3))
WT3 = RNG.standard_normal((1, 2, 2, 2, 2))
W3 = RNG.standard_normal((2, 1, 2, 2, 2))

# (name, program, inputs, one node in torch)
CONV = [
    ("conv2d", lambda t, Ft, x, w, b: Ft.conv2d(x, w, b), [X2, W2, B6], True),
    ("conv2d_nobias", lambda t, Ft, x, w: Ft.conv2d(x, w), [X2, W2], True),
    ("conv2d_stride_pad", lambda t, Ft, x, w, b: Ft.conv2d(x, w, b, stride=2, padding=1), [X2, W2, B6], True),
    ("conv2d_stride_pad_dilation", lambda t, Ft, x, w: Ft.conv2d(x, w, stride=(1, 2), padding=(2, 1),
                                                                   dilation=(2, 1)), [X2, W2], True),
    ("conv2d_groups", lambda t, Ft, x, w, b: Ft.conv2d(x, w, b, padding=1, groups=2), [X2, W2G, B6], True),
    ("conv2d_groups_stride_dilation", lambda t, Ft, x, w: Ft.conv2d(x, w, stride=2, dilation=2, groups=2),
     [X2, W2G], True),
    ("conv2d_same", lambda t, Ft, x, w, b: Ft.conv2d(x, w, b, padding="same"), [X2S, W2S, B3], True),
    ("conv2d_same_dilation", lambda t, Ft, x, w: Ft.conv2d(x, w, padding="same", dilation=2), [X2S, W2S], True),
    ("conv2d_same_even", lambda t, Ft, x, w: Ft.conv2d(x, w, padding="same"), [X2S, W2E], False),
    ("conv2d_valid", lambda t, Ft, x, w: Ft.conv2d(x, w, padding="valid"), [X2S, W2S], True),
    ("conv2d_unbatched", lambda t, Ft, x, w: Ft.conv2d(x[0], w), [X2S, W2S], False),
    ("conv1d", lambda t, Ft, x, w: Ft.conv1d(x, w), [X1, W1], True),
    ("conv1d_stride_pad_dilation", lambda t, Ft, x, w: Ft.conv1d(x, w, stride=2, padding=2, dilation=3), [X1, W1],
     True),
    ("conv1d_depthwise", lambda t, Ft, x, w, b: Ft.conv1d(x, w, b, padding=1, groups=4), [X1, W1G, B4], True),
    ("conv1d_same", lambda t, Ft, x, w: Ft.conv1d(x, w, padding="same"), [X1, W1], True),
    ("conv3d", lambda t, Ft, x, w, b: Ft.conv3d(x, w, b, padding=(0, 1, 1)), [X3S, W3, B3[:2]], True),
    ("conv_transpose2d", lambda t, Ft, x, w, b: Ft.conv_transpose2d(x, w, b), [X2S, WT2, B3], True),
    ("conv_transpose2d_stride_pad_output_pad",
     lambda t, Ft, x, w: Ft.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1), [X2S, WT2], True),
    ("conv_transpose2d_groups_dilation", lambda t, Ft, x, w, b: Ft.conv_transpose2d(
        x, w, b, stride=(1, 2), padding=(2, 0), groups=2, dilation=(2, 1)), [X2S, WT2G, B4], True),
    # output_padding ≥ stride, allowed by a larger dilation: the far pixels receive nothing
    ("conv_transpose2d_output_pad_dilation", lambda t, Ft, x, w: Ft.conv_transpose2d(
        x, w, padding=1, output_padding=1, dilation=2), [X2S, WT2], True),
    ("conv_transpose1d", lambda t, Ft, x, w, b: Ft.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
     [X1[:1], WT1, B3[:2]], True),
    ("conv_transpose1d_unbatched", lambda t, Ft, x, w: Ft.conv_transpose1d(x[0], w, stride=2), [X1, WT1], False),
    ("conv_transpose3d", lambda t, Ft, x, w: Ft.conv_transpose3d(x, w, stride=(1, 2, 1), padding=(0, 1, 0)),
     [X3S, WT3], True),
]

POOL = [
    ("max_pool2d", lambda t, Ft, x: Ft.max_pool2d(x, 2), [D2], True),
    ("max_pool2d_stride_pad", lambda t, Ft, x: Ft.max_pool2d(x, 3, stride=2, padding=1), [D2], True),
    ("max_pool2d_overlap_dilation", lambda t, Ft, x: Ft.max_pool2d(x, (3, 2), stride=1, dilation=(2, 1)), [D2], True),
    ("max_pool2d_ceil", lambda t, Ft, x: Ft.max_pool2d(x, 2, ceil_mode=True), [D2], True),
    ("max_pool2d_ceil_pad", lambda t, Ft, x: Ft.max_pool2d(x, 3, 2, 1, ceil_mode=True), [D2], True),
    ("max_pool1d", lambda t, Ft, x: Ft.max_pool1d(x, 3, stride=2), [D1], False),
    ("max_pool1d_pad_ceil", lambda t, Ft, x: Ft.max_pool1d(x, 2, padding=1, ceil_mode=True), [D1], False),
    ("avg_pool2d", lambda t, Ft, x: Ft.avg_pool2d(x, 2), [X2], True),
    ("avg_pool2d_pad", lambda t, Ft, x: Ft.avg_pool2d(x, 3, stride=2, padding=1), [X2], True),
    ("avg_pool2d_pad_exclude", lambda t, Ft, x: Ft.avg_pool2d(x, 3, 2, 1, count_include_pad=False), [X2], True),
    ("avg_pool2d_ceil", lambda t, Ft, x: Ft.avg_pool2d(x, 2, ceil_mode=True), [X2], True),
    ("avg_pool2d_ceil_pad", lambda t, Ft, x: Ft.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [X2], True),
    ("avg_pool2d_divisor", lambda t, Ft, x: Ft.avg_pool2d(x, 2, 1, divisor_override=3), [X2], True),
    ("avg_pool1d", lambda t, Ft, x: Ft.avg_pool1d(x, 3, stride=2, padding=1), [X1], False),
    ("adaptive_avg_pool2d", lambda t, Ft, x: Ft.adaptive_avg_pool2d(x, (3, 4)), [X2], True),
    ("adaptive_avg_pool2d_one", lambda t, Ft, x: Ft.adaptive_avg_pool2d(x, 1), [X2], True),
    ("adaptive_avg_pool2d_none", lambda t, Ft, x: Ft.adaptive_avg_pool2d(x, (None, 2)), [X2], True),
    ("adaptive_avg_pool1d", lambda t, Ft, x: Ft.adaptive_avg_pool1d(x, 4), [X1], False),
    ("adaptive_max_pool2d", lambda t, Ft, x: Ft.adaptive_max_pool2d(x, (3, 4)), [D2], True),
    ("adaptive_max_pool2d_up", lambda t, Ft, x: Ft.adaptive_max_pool2d(x, 5), [D2], True),
    ("max_pool3d", lambda t, Ft, x: Ft.max_pool3d(x, 2), [D3], True),
    ("max_pool3d_overlap_pad_dilation", lambda t, Ft, x: Ft.max_pool3d(x, (2, 3, 2), stride=1, padding=(0, 1, 1),
                                                                       dilation=(1, 1, 2)), [D3], True),
    ("max_pool3d_ceil", lambda t, Ft, x: Ft.max_pool3d(x, 2, ceil_mode=True), [D3], True),
    ("avg_pool3d", lambda t, Ft, x: Ft.avg_pool3d(x, 2, stride=1), [D3], True),
    ("avg_pool3d_pad_exclude_ceil", lambda t, Ft, x: Ft.avg_pool3d(x, 3, 2, 1, ceil_mode=True,
                                                                   count_include_pad=False), [D3], True),
    ("max_unpool2d", lambda t, Ft, x: Ft.max_unpool2d(*Ft.max_pool2d(x, 2, return_indices=True), 2,
                                                      output_size=(7, 6)), [D2[:1]], False),
    # windows that do not overlap: where they do, one input can win twice and unpooling keeps one write
    ("max_unpool1d", lambda t, Ft, x: Ft.max_unpool1d(*Ft.max_pool1d(x, 2, 3, return_indices=True), 2, 3), [D1],
     False),
    # squared, so the gradient's own graph records the adjoint (AvgPool3DBackwardBackward0)
    ("avg_pool3d_squared", lambda t, Ft, x: Ft.avg_pool3d(x, 2, stride=1) ** 2, [D3], True),
    ("avg_pool3d_divisor", lambda t, Ft, x: Ft.avg_pool3d(x, (1, 2, 2), divisor_override=3), [D3], True),
]

RESAMPLE = [
    ("unfold", lambda t, Ft, x: Ft.unfold(x, 2), [X2], True),
    ("unfold_all", lambda t, Ft, x: Ft.unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=2), [X2], True),
    ("fold", lambda t, Ft, c: Ft.fold(c, (4, 5), 2, stride=(2, 1)), [COLS8], True),
    ("fold_overlap", lambda t, Ft, c: Ft.fold(c, (3, 4), 2), [COLS], True),
    ("pixel_shuffle", lambda t, Ft, x: Ft.pixel_shuffle(x, 2), [X2[:, :, :3, :3]], True),
    ("pixel_unshuffle", lambda t, Ft, x: Ft.pixel_unshuffle(x, 2), [X2[:, :, :6, :4]], True),
    ("channel_shuffle", lambda t, Ft, x: Ft.channel_shuffle(x, 2), [X2S[:, :, :2]], True),
    ("channel_shuffle3d", lambda t, Ft, x: t.nn.ChannelShuffle(3)(x), [RNG.standard_normal((2, 6, 3))], True),
    ("upsample_nearest", lambda t, Ft, x: Ft.interpolate(x, scale_factor=2), [X2S], True),
    ("upsample_nearest_size", lambda t, Ft, x: Ft.interpolate(x, size=(7, 3)), [X2S], True),
    ("upsample_nearest1d", lambda t, Ft, x: Ft.interpolate(x, scale_factor=3), [X1], True),
    ("upsample_bilinear", lambda t, Ft, x: Ft.interpolate(x, scale_factor=2, mode="bilinear"), [X2S], True),
    ("upsample_bilinear_size", lambda t, Ft, x: Ft.interpolate(x, size=(8, 3), mode="bilinear"), [X2S], True),
    ("upsample_bilinear_corners", lambda t, Ft, x: Ft.interpolate(x, size=(9, 7), mode="bilinear",
                                                                  align_corners=True), [X2S], True),
    ("upsample_linear1d", lambda t, Ft, x: Ft.interpolate(x, size=13, mode="linear"), [X1], True),
    ("upsample_bicubic", lambda t, Ft, x: Ft.interpolate(x, scale_factor=1.6, mode="bicubic"), [X2S], True),
    ("upsample_bicubic_corners", lambda t, Ft, x: Ft.interpolate(x, size=(7, 3), mode="bicubic",
                                                                 align_corners=True), [X2S], True),
    ("upsample_trilinear", lambda t, Ft, x: Ft.interpolate(x, size=(3, 4, 2), mode="trilinear"), [X3S], True),
    ("upsample_nearest3d", lambda t, Ft, x: Ft.interpolate(x, scale_factor=(2, 1, 1.5)), [X3S], True),
    ("upsample_nearest_exact", lambda t, Ft, x: Ft.interpolate(x, size=(7, 3), mode="nearest-exact"), [X2S], True),
    ("upsample_nearest_exact1d", lambda t, Ft, x: Ft.interpolate(x, size=5, mode="nearest-exact"), [X1], True),
    ("interpolate_area", lambda t, Ft, x: Ft.interpolate(x, size=(3, 2), mode="area"), [X2S], True),
    ("adaptive_avg_pool3d", lambda t, Ft, x: Ft.adaptive_avg_pool3d(x, (1, 3, 2)), [X3S], True),
    # squared, so the gradient's own graph records the adjoint (AdaptiveAvgPool3DBackwardBackward0)
    ("adaptive_avg_pool3d_squared", lambda t, Ft, x: Ft.adaptive_avg_pool3d(x, (1, 3, 2)) ** 2, [X3S], True),
    ("affine_grid", lambda t, Ft, th: Ft.affine_grid(th, (2, 3, 4, 5), align_corners=False), [THETA], True),
    ("affine_grid_corners", lambda t, Ft, th: Ft.affine_grid(th, (2, 1, 3, 2), align_corners=True), [THETA], True),
    *[(f"grid_sample_{mode}_{pad}_{int(corners)}", lambda t, Ft, x, g, mode=mode, pad=pad, corners=corners:
       Ft.grid_sample(x, g, mode, pad, corners), [X2S[:, :, :4], GRID], True)
      for mode in ("bilinear", "nearest") for pad in ("zeros", "border", "reflection") for corners in (False, True)],
    # the spatial transformer: a grid from θ, then the image sampled at it (both inputs get gradients)
    ("affine_grid_then_grid_sample", lambda t, Ft, x, th: Ft.grid_sample(
        x, Ft.affine_grid(th[:1], (1, 2, 3, 4), align_corners=False), align_corners=False), [X2S, THETA], False),
    ("pad_reflect", lambda t, Ft, x: Ft.pad(x, (1, 2, 2, 1), mode="reflect"), [X2], True),
    ("pad_reflect1d", lambda t, Ft, x: Ft.pad(x, (3, 1), mode="reflect"), [X1], True),
    ("pad_replicate", lambda t, Ft, x: Ft.pad(x, (2, 0, 1, 3), mode="replicate"), [X2], True),
    ("pad_circular", lambda t, Ft, x: Ft.pad(x, (1, 2, 2, 1), mode="circular"), [X2], False),
    ("pad_constant", lambda t, Ft, x: Ft.pad(x, (1, 1, 2, 0), value=0.5), [X2], True),
]

CASES = CONV + POOL + RESAMPLE


# gradcheck is one backward per output element: run it on the cases with small outputs
def _out_size(case) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # padding='same' with an even kernel warns, as in PyTorch
        return int(np.prod(case[1](gradviz, F, *[gradviz.tensor(a) for a in case[2]]).shape))


SMALL = [c for c in CASES if _out_size(c) <= 200]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("name,prog,arrays,single", SMALL, ids=case_ids(SMALL))
def test_gradcheck(name, prog, arrays, single):
    xs = tuple(leaf(gradviz, a) for a in arrays)
    assert prog(gradviz, F, *xs).grad_fn is not None
    assert gradcheck(lambda *a: prog(gradviz, F, *a), xs)


@needs_torch
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("name,prog,arrays,single", CASES, ids=case_ids(CASES))
def test_torch_parity(name, prog, arrays, single):
    assert_program_matches_torch(prog, arrays, graph="none" if name in OTHER_GRAPH else "whole")


# PyTorch builds circular padding from in-place slice copies (a chain of CopySlices); here it is one cat
OTHER_GRAPH = {"pad_circular"}


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
    _, prog, arrays, _ = next(c for c in CASES if c[0] == name)
    # one sample and two channels keep finite differences cheap (all channels where they are structure)
    xs = tuple(leaf(gradviz, a if name.startswith("conv") or a.ndim < 4 else a[:1] if name.startswith("pixel")
                    else a[:1, :2]) for a in arrays)
    seed = leaf(gradviz, np.random.default_rng(5).standard_normal(tuple(prog(gradviz, F, *xs).shape)))

    def first_grads(*a):
        with gradviz.enable_grad():   # gradcheck takes its finite differences under no_grad
            out = prog(gradviz, F, *a[:-1])
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
