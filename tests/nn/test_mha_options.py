"""MultiheadAttention's less common options against torch 2.13: add_bias_kv (a learned key and value
appended to every sequence), add_zero_attn (a key and value of zeros), kdim/vdim (separate
projections), static_k/static_v (keys and values given already split into heads), with attention and
key-padding masks: the same initialisation from the same seed, state_dict keys, outputs, attention
weights, gradients of inputs and parameters, grad_fn names and errors."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz

pytestmark = [needs_torch, pytest.mark.torch]
L, S, N, E, H = 4, 6, 2, 8, 2
MODULES = [{"add_bias_kv": True}, {"add_zero_attn": True}, {"add_bias_kv": True, "add_zero_attn": True},
           {"kdim": 5, "vdim": 3}, {"kdim": 5, "vdim": 3, "add_bias_kv": True},
           {"batch_first": True, "add_bias_kv": True}]
CALLS = ["plain", "need_weights=False", "attn_mask", "key_padding_mask", "average_attn_weights=False"]


def _call_options(lib, call):
    if call == "need_weights=False":
        return {"need_weights": False}
    if call == "average_attn_weights=False":
        return {"average_attn_weights": False}
    if call == "attn_mask":
        return {"attn_mask": lib.tensor(np.triu(np.ones((L, S), bool), 1))}
    if call == "key_padding_mask":
        kpm = np.zeros((N, S), bool)
        kpm[0, -2:] = True
        return {"key_padding_mask": lib.tensor(kpm)}
    return {}


def _run(lib, options, call, arrays, state=None):
    lib.manual_seed(0)
    module = lib.nn.MultiheadAttention(E, H, **options)
    if state is not None:
        module.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out, weights = module(*inputs, **_call_options(lib, call))
    (out.sum() + (weights.sum() if weights is not None else 0)).backward()
    return module, out, weights, inputs


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("options", MODULES, ids=str)
def test_module_matches_torch(options, call):
    rng = np.random.default_rng(len(str(options)) + len(call))
    shape = (lambda n, d: (N, n, d)) if options.get("batch_first") else (lambda n, d: (n, N, d))
    arrays = [rng.standard_normal(shape(L, E)), rng.standard_normal(shape(S, options.get("kdim", E))),
              rng.standard_normal(shape(S, options.get("vdim", E)))]
    arrays = [a.astype(np.float32) for a in arrays]
    theirs, out_t, w_t, in_t = _run(torch, options, call, arrays)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    ours, out_g, w_g, in_g = _run(gradviz, options, call, arrays, state)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert out_g.grad_fn.name() == out_t.grad_fn.name()
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), atol=1e-5)
    assert (w_g is None) == (w_t is None)
    if w_t is not None:
        np.testing.assert_allclose(w_g.detach().numpy(), w_t.detach().numpy(), atol=1e-5)
    for a, b in zip(in_g, in_t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-4)
    grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].grad.numpy(), atol=1e-4)


@pytest.mark.parametrize("options", MODULES, ids=str)
def test_initialisation_matches_torch_for_the_same_seed(options):
    torch.manual_seed(3)
    gradviz.manual_seed(3)
    theirs, ours = torch.nn.MultiheadAttention(E, H, **options), gradviz.nn.MultiheadAttention(E, H, **options)
    for (name_t, t), (name_g, g) in zip(theirs.state_dict().items(), ours.state_dict().items()):
        assert name_g == name_t
        np.testing.assert_allclose(g.numpy(), t.numpy(), atol=1e-6)


def _functional(lib, arrays, bias=False, zero=False, static=False, mask=False):
    t = {k: lib.tensor(v, requires_grad=True) for k, v in arrays.items()}
    out, weights = lib.nn.functional.multi_head_attention_forward(
        t["q"], t["k"], t["v"], E, H, t["w"], t["b"], t["bk"] if bias else None, t["bv"] if bias else None, zero,
        0.0, t["ow"], t["ob"], static_k=t["sk"] if static else None, static_v=t["sv"] if static else None,
        attn_mask=lib.tensor(np.triu(np.ones((L, S), bool), 1)) if mask else None)
    (out.sum() + weights.sum()).backward()
    return out, weights, t


FUNCTIONAL = [{"static": True}, {"static": True, "zero": True}, {"bias": True, "mask": True},
              {"bias": True, "zero": True, "mask": True}, {"zero": True, "mask": True}]


@pytest.mark.parametrize("options", FUNCTIONAL, ids=str)
def test_functional_with_static_keys_bias_and_zero_attention_matches_torch(options):
    rng = np.random.default_rng(1)
    arrays = dict(q=rng.standard_normal((L, N, E)), k=rng.standard_normal((S, N, E)), v=rng.standard_normal((S, N, E)),
                  w=rng.standard_normal((3 * E, E)) * 0.3, b=rng.standard_normal(3 * E) * 0.1,
                  ow=rng.standard_normal((E, E)) * 0.3, ob=rng.standard_normal(E) * 0.1,
                  sk=rng.standard_normal((N * H, 7, E // H)), sv=rng.standard_normal((N * H, 7, E // H)),
                  bk=rng.standard_normal((1, 1, E)), bv=rng.standard_normal((1, 1, E)))
    out_t, w_t, t = _functional(torch, arrays, **options)
    out_g, w_g, g = _functional(gradviz, arrays, **options)
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(w_g.detach().numpy(), w_t.detach().numpy(), atol=1e-10)
    for name in arrays:
        assert (g[name].grad is None) == (t[name].grad is None), name
        if t[name].grad is not None:
            np.testing.assert_allclose(g[name].grad.numpy(), t[name].grad.numpy(), atol=1e-9)


@pytest.mark.parametrize("bad", [{"bias": True, "static": True}, {"static_rows": 3}, {"only_k": True}])
def test_errors_are_torchs(bad):
    def call(lib):
        rng = np.random.default_rng(2)
        q = lib.tensor(rng.standard_normal((L, N, E)))
        w, ow = lib.tensor(rng.standard_normal((3 * E, E))), lib.tensor(rng.standard_normal((E, E)))
        rows = bad.get("static_rows", N * H)
        sk = lib.tensor(rng.standard_normal((rows, S, E // H))) if "bias" in bad or "static_rows" in bad else None
        bk = lib.tensor(rng.standard_normal((1, 1, E))) if "bias" in bad or "only_k" in bad else None
        bv = bk if "bias" in bad else None
        try:
            lib.nn.functional.multi_head_attention_forward(q, q, q, E, H, w, None, bk, bv, False, 0.0, ow, None,
                                                           static_k=sk)
        except Exception as e:  # noqa: BLE001 - the comparison is the point
            return type(e).__name__, str(e)
        return None
    assert call(gradviz) == call(torch) is not None


SHAPE_ERRORS = {
    "a 4-D query": lambda L, m: m(L.zeros(2, 3, 1, 8), L.zeros(2, 3, 1, 8), L.zeros(2, 3, 1, 8)),
    "a 2-D mask of the wrong size": lambda L, m: m(L.zeros(3, 1, 8), L.zeros(3, 1, 8), L.zeros(3, 1, 8),
                                                   attn_mask=L.zeros(2, 2)),
    "a 3-D mask of the wrong size": lambda L, m: m(L.zeros(3, 1, 8), L.zeros(3, 1, 8), L.zeros(3, 1, 8),
                                                   attn_mask=L.zeros(3, 3, 3)),
    "a 4-D mask": lambda L, m: m(L.zeros(3, 1, 8), L.zeros(3, 1, 8), L.zeros(3, 1, 8), attn_mask=L.zeros(1, 1, 3, 3)),
    "is_causal without a mask": lambda L, m: m(L.zeros(3, 1, 8), L.zeros(3, 1, 8), L.zeros(3, 1, 8), is_causal=True),
    "a 2-D key for a 3-D query": lambda L, m: m(L.zeros(3, 1, 8), L.zeros(3, 8), L.zeros(3, 8)),
    "a 3-D key_padding_mask": lambda L, m: m(L.zeros(3, 1, 8), L.zeros(3, 1, 8), L.zeros(3, 1, 8),
                                             key_padding_mask=L.zeros(1, 1, 3, dtype=L.bool)),
}


@pytest.mark.parametrize("case", SHAPE_ERRORS)
def test_shape_errors_are_torchs(case):
    def call(lib):
        lib.manual_seed(0)
        try:
            SHAPE_ERRORS[case](lib, lib.nn.MultiheadAttention(E, H))
        except Exception as e:  # noqa: BLE001 - the comparison is the point
            return type(e).__name__, str(e)
        return None
    assert call(gradviz) == call(torch) is not None
