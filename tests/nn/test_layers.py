"""Norms, attention, recurrent cells and layers, and the layer modules against torch.

Functionals: their rows (group "nn" of tests/ops/cases.py) run under gradcheck in float64 and
against PyTorch with every other row; here, their second derivatives.
Modules: built in both libraries, torch's weights copied into gradviz's, then outputs,
input and parameter gradients, buffers and reprs compared.
"""
import numpy as np
import pytest
from tests.ops.cases import H3, MASK4, QS, X4, XI, XL, find
from tests.support.parity import case_ids, leaf, needs_torch, real_torch as torch

import gradviz
import gradviz.nn as nn
import gradviz.nn.functional as F
from gradviz.autograd import gradcheck


@pytest.mark.parametrize("name", ["group_norm_affine", "sdpa_causal", "sdpa_bool_mask"])
def test_second_order(name):
    case = find(name, "nn")
    prog, arrays = case.fn, case.inputs
    xs = tuple(leaf(gradviz, a) for a in arrays)
    seed = leaf(gradviz, np.random.default_rng(5).standard_normal(tuple(prog(gradviz, *xs).shape)))

    def first_grads(*a):
        with gradviz.enable_grad():   # gradcheck takes its finite differences under no_grad
            grads = gradviz.autograd.grad(prog(gradviz, *a[:-1]), a[:-1], a[-1], create_graph=True)
            return sum((g * g).sum() for g in grads)
    assert first_grads(*xs, seed).requires_grad
    assert gradcheck(first_grads, xs + (seed,))


# -- modules -------------------------------------------------------------------------------------------
def _pair(build, *inputs, seed=0):
    """The module built in both libraries (float64), torch's parameters and buffers copied over."""
    torch.manual_seed(seed)
    theirs = build(torch.nn).double()
    ours = build(nn).double()
    mine = dict(ours.named_parameters())
    mine.update(ours.named_buffers())
    for name, value in list(theirs.named_parameters()) + list(theirs.named_buffers()):
        mine[name]._data[...] = value.detach().numpy()
    return ours, theirs


def _forward_backward(module, t, arrays, pick):
    xs = [leaf(t, a) for a in arrays]
    out = pick(module(*xs))
    seed = np.random.default_rng(3).standard_normal(tuple(out.shape))
    out.backward(t.tensor(seed, dtype=t.float64))
    return out, xs


MODULES = [
    ("Conv2d", lambda m: m.Conv2d(4, 6, 3, stride=2, padding=1, bias=True), [X4], None),
    ("Conv2d_reflect_same", lambda m: m.Conv2d(4, 4, 3, padding="same", groups=2, padding_mode="reflect"), [X4], None),
    ("Conv2d_replicate", lambda m: m.Conv2d(4, 2, 2, padding=1, padding_mode="replicate", bias=False), [X4], None),
    ("Conv2d_circular", lambda m: m.Conv2d(4, 2, 3, padding=1, padding_mode="circular"), [X4], None),
    ("Conv1d", lambda m: m.Conv1d(3, 5, 2, dilation=2), [XL], None),
    ("MaxPool2d", lambda m: m.MaxPool2d(2, 1), [X4], None),
    ("AvgPool1d", lambda m: m.AvgPool1d(2), [XL], None),
    ("AdaptiveAvgPool2d", lambda m: m.AdaptiveAvgPool2d((2, 1)), [X4], None),
    ("BatchNorm2d", lambda m: m.BatchNorm2d(4), [X4], None),
    ("GroupNorm", lambda m: m.GroupNorm(2, 4), [X4], None),
    ("InstanceNorm2d_affine", lambda m: m.InstanceNorm2d(4, affine=True), [X4], None),
    ("InstanceNorm2d_tracked", lambda m: m.InstanceNorm2d(4, track_running_stats=True), [X4], None),
    ("RMSNorm", lambda m: m.RMSNorm([3, 4]), [XL], None),
    ("RNNCell", lambda m: m.RNNCell(3, 4), [XI, H3], None),
    ("RNNCell_relu_unbatched", lambda m: m.RNNCell(3, 4, nonlinearity="relu"), [XI[0]], None),
    ("GRUCell", lambda m: m.GRUCell(3, 4, bias=False), [XI, H3], None),
    ("LSTMCell", lambda m: m.LSTMCell(3, 4), [XI], lambda out: out[0] * out[1]),
    ("RNN", lambda m: m.RNN(4, 3, num_layers=2), [XL], lambda out: out[0] * 2 + out[1].sum(0)),
    ("RNN_batch_first_bidirectional", lambda m: m.RNN(4, 3, batch_first=True, bidirectional=True), [XL],
     lambda out: out[0].sum(1) + out[1].sum(0)[:, :1]),
    ("GRU_bidirectional_2_layers", lambda m: m.GRU(4, 3, num_layers=2, bidirectional=True), [XL],
     lambda out: out[0].sum() + out[1].sum()),
    ("LSTM_batch_first", lambda m: m.LSTM(4, 3, batch_first=True), [XL],
     lambda out: out[0].sum() + (out[1][0] * out[1][1]).sum()),
    ("LSTM_bidirectional_2_layers_unbatched", lambda m: m.LSTM(4, 2, num_layers=2, bidirectional=True), [XL[0]],
     lambda out: out[0].sum() + out[1][1].sum()),
    ("MultiheadAttention", lambda m: _MHA(m, 4, 2), [XL], None),
    ("MultiheadAttention_no_weights", lambda m: _MHA(m, 4, 2, need_weights=False), [XL], None),
    ("MultiheadAttention_batch_first_causal", lambda m: _MHA(m, 4, 2, batch_first=True, causal=True), [XL], None),
    ("PixelShuffle", lambda m: m.PixelShuffle(2), [X4], None),
    ("Upsample_bilinear", lambda m: m.Upsample(scale_factor=2, mode="bilinear"), [X4], None),
    ("Fold_of_Unfold", lambda m: m.Sequential(m.Unfold(2, padding=1), m.Fold((3, 3), 2, padding=1)), [X4], None),
]


def _MHA(m, e, h, need_weights=True, batch_first=False, causal=False):
    """Self-attention as a module of one input, with the options under test."""
    class SelfAttention(m.Module):
        def __init__(self):
            super().__init__()
            self.attn = m.MultiheadAttention(e, h, batch_first=batch_first)

        def forward(self, x):
            mask = None
            if causal:
                n = x.shape[1] if batch_first else x.shape[0]
                mask = _causal_mask(m, n)
            return self.attn(x, x, x, need_weights=need_weights, attn_mask=mask)[0]
    return SelfAttention()


def _causal_mask(m, n):
    lib = torch if m is torch.nn else gradviz
    return lib.tensor(np.triu(np.ones((n, n), dtype=bool), 1))


@needs_torch
@pytest.mark.filterwarnings("ignore:dropout option adds dropout")
@pytest.mark.parametrize("name,build,arrays,pick", MODULES, ids=case_ids(MODULES))
def test_module_parity(name, build, arrays, pick):
    ours, theirs = _pair(build)
    pick = pick or (lambda out: out)
    out_t, xs_t = _forward_backward(theirs, torch, arrays, pick)
    out_g, xs_g = _forward_backward(ours, gradviz, arrays, pick)
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=1e-9, atol=1e-12)
    for a, b in zip(xs_g, xs_t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-11)
    theirs_params = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[pname].grad.numpy(), rtol=1e-8, atol=1e-11,
                                   err_msg=pname)
    theirs_buffers = dict(theirs.named_buffers())
    for bname, b in ours.named_buffers():
        np.testing.assert_allclose(b.numpy(), theirs_buffers[bname].numpy(), rtol=1e-10, err_msg=bname)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]


REPRS = [
    lambda m: m.Conv2d(3, 4, 3),
    lambda m: m.Conv1d(3, 4, 3, stride=2, padding=1, dilation=2, bias=False),
    lambda m: m.Conv2d(4, 4, (3, 1), padding="same", groups=2, padding_mode="reflect"),
    lambda m: m.MaxPool2d(2),
    lambda m: m.MaxPool1d(3, 2, 1, ceil_mode=True),
    lambda m: m.AvgPool2d(2),
    lambda m: m.AvgPool1d(3),
    lambda m: m.AdaptiveAvgPool2d((1, 1)),
    lambda m: m.AdaptiveAvgPool1d(4),
    lambda m: m.AdaptiveMaxPool2d(2),
    lambda m: m.BatchNorm2d(3),
    lambda m: m.BatchNorm2d(3, momentum=None, affine=False),
    lambda m: m.GroupNorm(1, 3),
    lambda m: m.GroupNorm(2, 4, affine=False),
    lambda m: m.InstanceNorm2d(3),
    lambda m: m.InstanceNorm2d(3, affine=True, track_running_stats=True),
    lambda m: m.RMSNorm(8),
    lambda m: m.RMSNorm([3, 4], eps=1e-5, elementwise_affine=False),
    lambda m: m.Dropout2d(),
    lambda m: m.Dropout1d(0.2),
    lambda m: m.PixelShuffle(2),
    lambda m: m.PixelUnshuffle(3),
    lambda m: m.Unfold(2),
    lambda m: m.Fold((3, 3), 2),
    lambda m: m.Upsample(scale_factor=2),
    lambda m: m.Upsample(size=(4, 4), mode="bilinear"),
    lambda m: m.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
    lambda m: m.ZeroPad2d(1),
    lambda m: m.RNNCell(3, 4),
    lambda m: m.RNNCell(3, 4, bias=False, nonlinearity="relu"),
    lambda m: m.LSTMCell(3, 4),
    lambda m: m.GRUCell(3, 4),
    lambda m: m.RNN(3, 4),
    lambda m: m.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True),
    lambda m: m.GRU(3, 4, 2),
    lambda m: m.MultiheadAttention(8, 2),
]


@needs_torch
@pytest.mark.filterwarnings("ignore:dropout option adds dropout")
@pytest.mark.parametrize("build", REPRS, ids=range(len(REPRS)))
def test_repr_as_torch_prints_it(build):
    assert repr(build(nn)) == repr(build(torch.nn))


def test_batch_norm2d_running_stats_and_eval():
    bn = nn.BatchNorm2d(4).double()
    x = gradviz.tensor(X4)
    bn(x)
    mean = X4.mean(axis=(0, 2, 3))
    var = X4.var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * var)
    bn.eval()
    y = bn(x)
    assert y.grad_fn is None or y.grad_fn.name() == "NativeBatchNormBackward0"
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        bn(gradviz.tensor(XL))


@needs_torch
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval_second_derivative_matches_torch(affine):
    """In eval mode the running statistics are constants of the gradient's own graph (create_graph)."""
    grads = []
    for lib in (gradviz, torch):
        bn = lib.nn.BatchNorm2d(4, affine=affine).double().eval()
        bn.running_mean.copy_(lib.tensor(X4.mean(axis=(0, 2, 3))))
        bn.running_var.copy_(lib.tensor(X4.var(axis=(0, 2, 3)) + 0.5))
        x = lib.tensor(X4, requires_grad=True)
        g, = lib.autograd.grad((bn(x) ** 3).sum(), x, create_graph=True)
        (g * g).sum().backward()
        grads.append([x.grad.numpy()] + ([bn.weight.grad.numpy(), bn.bias.grad.numpy()] if affine else []))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_dropout2d_zeroes_whole_channels():
    x = gradviz.ones(8, 16, 3, 3, requires_grad=True)
    y = nn.Dropout2d(0.5)(x)
    planes = y.detach().numpy().reshape(8, 16, 9)
    assert set(np.unique(planes)) <= {0.0, 2.0}
    assert (planes.min(-1) == planes.max(-1)).all()       # a channel is kept or dropped as a whole
    assert 0 < (planes[:, :, 0] == 0).mean() < 1
    assert y.grad_fn.name() == "MulBackward0"
    d = nn.Dropout2d(0.5).eval()
    assert d(x) is x


def test_sdpa_dropout_runs_the_math_path():
    q = gradviz.randn(2, 3, 4, requires_grad=True)
    y = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    y.sum().backward()
    assert tuple(q.grad.shape) == (2, 3, 4)


def test_rnn_errors():
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 4"):
        nn.GRU(3, 2)(gradviz.tensor(XL, dtype=gradviz.float32))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 2 expected 3"):
        nn.LSTMCell(3, 2)(gradviz.ones(4, 2))


@pytest.mark.parametrize("mask", [None, "causal", MASK4], ids=["none", "causal", "bool"])
def test_fused_attention_record_gradcheck(mask):
    """The one-node kernel (what float32 runs) checked in float64 by calling its record directly."""
    from gradviz.ops.attention import SDPA
    from gradviz.functions.attention import _additive_mask
    from gradviz.autograd.apply import apply
    q, k, v = (leaf(gradviz, a) for a in (QS[:1], QS[:1] * 0.7, QS[:1, :, :, :3]))   # a value head size of 3
    causal = isinstance(mask, str)
    m = _additive_mask(None if mask is None or causal else gradviz.tensor(mask), causal, 4, 4, np.float64)
    assert gradcheck(lambda *a: apply(SDPA, a, (m, 0.5)), (q, k, v))


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"mask": MASK4}], ids=["none", "causal", "bool"])
def test_fused_attention_float32_matches_torch(kwargs):
    outs = []
    for t in (gradviz, torch):
        q, k, v = (t.tensor(a.astype(np.float32), requires_grad=True) for a in (QS, QS * 0.7, QS[:, ::-1]))
        mask = t.tensor(kwargs["mask"]) if "mask" in kwargs else None
        y = t.nn.functional.scaled_dot_product_attention(q, k, v, mask, is_causal=kwargs.get("is_causal", False))
        y.backward(t.ones_like(y))
        outs.append((y.grad_fn.name(), y.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()))
    (name_g, *ours), (name_t, *theirs) = outs
    assert name_g == name_t == "ScaledDotProductFlashAttentionForCpuBackward0"
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_erf_on_arrays_matches_math_erf():
    """GELU's erf runs on whole arrays (Cephes' rational forms): within a few units in the last place
    of float64, and within 2 of float32 (evaluated in float32)."""
    import math

    from gradviz.ops.special import erf
    x = np.concatenate([np.random.default_rng(4).standard_normal(20000) * s for s in (0.3, 1.5, 5, 40)])
    x = np.concatenate([x, [0.0, -0.0, 1.0, -1.0, 8.0, -8.0, 1e-300, np.inf, -np.inf]])
    ref = np.array([math.erf(v) for v in x])
    np.testing.assert_array_max_ulp(erf(x), ref, maxulp=4)
    x32 = x.astype(np.float32)
    np.testing.assert_array_max_ulp(erf(x32), np.array([math.erf(v) for v in x32.astype(float)], dtype=np.float32),
                                    maxulp=2)
    assert np.isnan(erf(np.array([np.nan]))).all()
    assert erf(np.float32([0.5, 2.0])).dtype == np.float32 and erf(np.array(0.25)).shape == ()



def test_erf_writes_its_outer_elements_back_in_place_on_any_layout():
    """erf's elements beyond 1 go back by their flat positions: a transposed, a sliced and a
    Fortran-ordered input give, element for element, what their contiguous copy gives."""
    from gradviz.ops.special import erf
    a = (np.random.default_rng(5).standard_normal((6, 40)) * 2).astype(np.float32)
    a[0, :4] = [np.nan, np.inf, -9.0, -0.0]
    for view in (a.T, a[:, ::3], np.asfortranarray(a), a[::-1]):
        assert not np.all(np.abs(view) <= 1)
        np.testing.assert_array_equal(erf(view), erf(np.ascontiguousarray(view)))
        assert erf(view).shape == view.shape

def test_float32_erf_is_within_2_ulp_across_its_inner_form():
    """float32's own polynomial covers |x| ≤ 1: every 307th float32 there (both signs, from 1e-4, and
    the smallest ones) is within 2 units in the last place of the float64 form rounded to float32."""
    from gradviz.ops.special import erf
    low, high = np.float32(1e-4).view(np.int32), np.float32(1).view(np.int32)
    x = np.arange(low, high + 1, 307, dtype=np.int32).view(np.float32)
    x = np.concatenate([x, -x, np.float32([1e-30, 1e-38, 1e-45, 0.0, -0.0, 1.0, -1.0])])
    np.testing.assert_array_max_ulp(erf(x), erf(x.astype(np.float64)).astype(np.float32), maxulp=2)


def test_erf_of_inner_elements_alone_is_what_a_mixed_array_gives_them():
    """Where no |x| is beyond 1 (a GPT's GELU at its scale) the outer form is not looked for: those
    elements come out as they do beside outer ones, and a lone NaN is still found and kept."""
    from gradviz.ops.special import erf
    for dtype in (np.float32, np.float64):
        x = (np.random.default_rng(6).standard_normal(3000) * 1.5).astype(dtype)
        inner = np.abs(x) <= 1
        assert 0 < inner.sum() < x.size
        np.testing.assert_array_equal(erf(x[inner]), erf(x)[inner])
        assert np.isnan(erf(np.array([0.5, np.nan, -0.25], dtype=dtype))[1])


def test_rows_added_at_one_index_keep_add_at_order():
    """An embedding's gradient (whole rows added at one integer index) runs as a flat add.at: every
    element still receives its rows in the index's order, so the bits are those of adding row by
    row, −0, inf and NaN included; negative indices count from the end; out of range still raises."""
    from gradviz.ops.core import ArrayNamespace
    ns, rng = ArrayNamespace(np), np.random.default_rng(7)
    for dtype in (np.float32, np.float64, np.int64):
        idx = rng.integers(-9, 9, (12, 40))
        g = (rng.standard_normal((12, 40, 3, 2)) * 1e3).astype(dtype)
        if dtype != np.int64:
            g[0, :5] = [[[-0.0, np.inf]] * 3, [[np.nan, -np.inf]] * 3, [[-0.0, 1.0]] * 3, [[1e30, -0.0]] * 3,
                        [[-1e30, 2.0]] * 3]
        expected = np.zeros((9, 3, 2), dtype=dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            for k, i in np.ndenumerate(idx):
                expected[i] += g[k]
            got = ns.index_scatter(g, (9, 3, 2), (idx,))
        np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))
    with pytest.raises(IndexError):
        ns.index_scatter(np.ones((2, 3)), (4, 3), (np.array([0, 4]),))


INITS = [lambda m: m.Conv2d(3, 4, 3), lambda m: m.Conv1d(3, 4, 2, bias=False), lambda m: m.Conv2d(4, 6, (3, 2), groups=2),
         lambda m: m.RNNCell(3, 4), lambda m: m.LSTMCell(3, 4), lambda m: m.GRUCell(3, 4), lambda m: m.RNN(3, 4, 2),
         lambda m: m.LSTM(3, 4, bidirectional=True), lambda m: m.GRU(3, 4, batch_first=True),
         lambda m: m.MultiheadAttention(8, 2), lambda m: m.GroupNorm(2, 4), lambda m: m.RMSNorm(4)]


@needs_torch
@pytest.mark.parametrize("build", INITS, ids=range(len(INITS)))
def test_initial_weights_match_torch_seed_for_seed(build):
    torch.manual_seed(3)
    theirs = build(torch.nn)
    gradviz.manual_seed(3)
    ours = build(nn)
    expected = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(expected)
    for name, p in ours.named_parameters():
        np.testing.assert_array_equal(p.detach().numpy(), expected[name].detach().numpy(), err_msg=name)


@needs_torch
def test_dropout2d_draws_torch_masks():
    masks = []
    for lib in (torch, gradviz):
        lib.manual_seed(5)
        x = lib.ones(4, 6, 2, 2)
        masks.append(lib.nn.Dropout2d(0.3)(x).numpy())
    np.testing.assert_array_equal(masks[1], masks[0])


DROPOUTS = {   # every dropout F has, in place and not: (call, input shape)
    "dropout": (lambda F, x, inplace: F.dropout(x, 0.3, True, inplace), (3, 4, 5, 2)),
    "dropout1d_unbatched": (lambda F, x, inplace: F.dropout1d(x, 0.3, True, inplace), (4, 5)),
    "dropout2d": (lambda F, x, inplace: F.dropout2d(x, 0.3, True, inplace), (3, 4, 5, 2)),
    "dropout3d_unbatched": (lambda F, x, inplace: F.dropout3d(x, 0.3, True, inplace), (3, 4, 5, 2)),
    "alpha_dropout": (lambda F, x, inplace: F.alpha_dropout(x, 0.3, True, inplace), (3, 4, 5, 2)),
    "feature_alpha_dropout": (lambda F, x, inplace: F.feature_alpha_dropout(x, 0.3, True, inplace), (3, 4, 5, 2)),
    "alpha_dropout_p1": (lambda F, x, inplace: F.alpha_dropout(x, 1.0, True, inplace), (3, 4)),
}


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("inplace", [False, True], ids=["new", "inplace"])
@pytest.mark.parametrize("name", sorted(DROPOUTS))
def test_every_dropout_draws_and_writes_as_torch(name, inplace, dtype):
    """The same output, node, gradient and next draws as torch, bit for bit; inplace=True writes into
    (and returns) the input, as torch's does."""
    call, shape = DROPOUTS[name]
    values = np.random.default_rng(0).standard_normal(shape)
    seen = []
    for lib in (torch, gradviz):
        lib.manual_seed(5)
        leaf_ = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        x = leaf_ * 1
        out = call(lib.nn.functional, x, inplace)
        (out * lib.arange(out.numel()).reshape(out.shape)).sum().backward()
        seen.append((out.detach().numpy(), out.grad_fn.name(), out is x, x.detach().numpy(), leaf_.grad.numpy(),
                     lib.rand(3).numpy()))
    for got, want in zip(*reversed(seen)):
        if isinstance(want, np.ndarray):
            np.testing.assert_array_equal(got, want)
        else:
            assert got == want


@needs_torch
def test_alpha_dropout_modules_and_their_errors_are_torchs():
    for lib in (torch, gradviz):
        lib.manual_seed(2)
    x = np.linspace(-1, 1, 24).reshape(2, 3, 4)
    outs = [lib.nn.FeatureAlphaDropout(0.4)(lib.tensor(x)).numpy() for lib in (torch, gradviz)]
    np.testing.assert_array_equal(outs[1], outs[0])
    assert repr(nn.AlphaDropout(0.2)) == repr(torch.nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"
    assert gradviz.nn.AlphaDropout(0.5).eval()(gradviz.tensor(x)).numpy().tolist() == x.tolist()
    for call in (lambda lib: lib.nn.functional.alpha_dropout(lib.ones(3), 1.5, True),
                 lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(3), 0.5, True),
                 lambda lib: lib.alpha_dropout(lib.ones(3), -0.5, True)):
        errors = []
        for lib in (torch, gradviz):
            with pytest.raises(Exception) as caught:
                call(lib)
            errors.append((type(caught.value).__name__, str(caught.value)))
        assert errors[1] == errors[0]


@needs_torch
def test_hardtanh_in_place_is_torchs():
    outs = []
    for lib in (torch, gradviz):
        x = lib.tensor([-3.0, 0.5, 4.0])
        out = lib.nn.functional.hardtanh_(x, min_val=-2.0)
        outs.append((out is x, x.tolist()))
    assert outs[1] == outs[0] == (True, [-2.0, 0.5, 1.0])
