"""The deprecated size_average/reduce pair of every loss that takes it, against PyTorch 2.13:
the reduction it means (overriding `reduction`), the values and torch's UserWarning word for word;
and the `weight=` that torch 2.13 gives mse_loss, l1_loss and huber_loss."""
import warnings

import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

rng = np.random.default_rng(0)
A, B = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
P, T, SIGNS = 1 / (1 + np.exp(-A)), (B > 0) * 1.0, np.sign(B)
LABELS = np.array([1, 0, 3])

LOSSES = {   # name -> (lib, F) -> the loss called with the legacy keywords it is given
    "binary_cross_entropy": lambda t, F, **k: F.binary_cross_entropy(t.tensor(P), t.tensor(T), **k),
    "binary_cross_entropy_with_logits": lambda t, F, **k: F.binary_cross_entropy_with_logits(t.tensor(A), t.tensor(T),
                                                                                               **k),
    "cosine_embedding_loss": lambda t, F, **k: F.cosine_embedding_loss(t.tensor(A), t.tensor(B),
                                                                       t.tensor(SIGNS[:, 0]), **k),
    "cross_entropy": lambda t, F, **k: F.cross_entropy(t.tensor(A), t.tensor(LABELS), **k),
    "hinge_embedding_loss": lambda t, F, **k: F.hinge_embedding_loss(t.tensor(A), t.tensor(SIGNS), **k),
    "kl_div": lambda t, F, **k: F.kl_div(t.tensor(A), t.tensor(P), **k),
    "l1_loss": lambda t, F, **k: F.l1_loss(t.tensor(A), t.tensor(B), **k),
    "margin_ranking_loss": lambda t, F, **k: F.margin_ranking_loss(t.tensor(A[:, 0]), t.tensor(B[:, 0]),
                                                                   t.tensor(SIGNS[:, 0]), **k),
    "mse_loss": lambda t, F, **k: F.mse_loss(t.tensor(A), t.tensor(B), **k),
    "multi_margin_loss": lambda t, F, **k: F.multi_margin_loss(t.tensor(A), t.tensor(LABELS), **k),
    "multilabel_margin_loss": lambda t, F, **k: F.multilabel_margin_loss(t.tensor(A), t.tensor([[3, 0, -1, 1]] * 3),
                                                                         **k),
    "multilabel_soft_margin_loss": lambda t, F, **k: F.multilabel_soft_margin_loss(t.tensor(A), t.tensor(T), **k),
    "nll_loss": lambda t, F, **k: F.nll_loss(t.tensor(A), t.tensor(LABELS), **k),
    "poisson_nll_loss": lambda t, F, **k: F.poisson_nll_loss(t.tensor(A), t.tensor(P), **k),
    "smooth_l1_loss": lambda t, F, **k: F.smooth_l1_loss(t.tensor(A), t.tensor(B), **k),
    "soft_margin_loss": lambda t, F, **k: F.soft_margin_loss(t.tensor(A), t.tensor(SIGNS), **k),
    "triplet_margin_loss": lambda t, F, **k: F.triplet_margin_loss(t.tensor(A), t.tensor(B), t.tensor(P), **k),
}
LEGACY = [dict(size_average=False), dict(reduce=False), dict(size_average=True, reduce=True),
          dict(size_average=False, reduce=False), dict(size_average=False, reduction="none"),
          dict(reduce=True, reduction="sum")]


def _run(lib, name, kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = LOSSES[name](lib, lib.nn.functional, **kwargs)
    return out.detach().numpy(), [(w.category, str(w.message)) for w in caught]


@needs_torch
@pytest.mark.parametrize("kwargs", LEGACY, ids=lambda k: ",".join(f"{a}={v}" for a, v in k.items()))
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_legacy_pair_means_what_it_means_in_torch(name, kwargs):
    (ours, our_warnings), (theirs, their_warnings) = _run(gradviz, name, kwargs), _run(real_torch, name, kwargs)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
    assert our_warnings == their_warnings


@needs_torch
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_take_torchs_parameters_in_torchs_order(name):
    import inspect
    ours = list(inspect.signature(getattr(gradviz.nn.functional, name)).parameters)
    theirs = [p for p in inspect.signature(getattr(real_torch.nn.functional, name)).parameters]
    assert ours == theirs


def test_the_legacy_pair_warns_at_the_callers_line():
    with pytest.warns(UserWarning, match=r"please use reduction='sum' instead\.") as caught:
        gradviz.nn.functional.mse_loss(gradviz.ones(2), gradviz.zeros(2), size_average=False)
    assert caught[0].filename == __file__


WEIGHTED = ["mse_loss", "l1_loss", "huber_loss"]


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", WEIGHTED)
def test_weighted_pointwise_losses_match_torch(name, reduction):
    weights = np.abs(B) + 0.25
    seen = []
    for lib in (gradviz, real_torch):
        x, y, w = (lib.tensor(a, requires_grad=True) for a in (A, B * 2, weights))
        out = getattr(lib.nn.functional, name)(x, y, reduction=reduction, weight=w)
        grads = lib.autograd.grad((out * out).sum(), (x, y, w))
        seen.append((out.detach().numpy(), [g.numpy() for g in grads], type(out.grad_fn).__name__))
    (ours, our_grads, our_node), (theirs, their_grads, their_node) = seen
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert our_node == their_node


@needs_torch
@pytest.mark.parametrize("name", WEIGHTED)
@pytest.mark.parametrize("case", ["bad_reduction", "weight_shape"])
def test_weighted_loss_errors_in_torchs_words(name, case):
    seen = []
    for lib in (gradviz, real_torch):
        x, y = lib.tensor(A), lib.tensor(B)
        kwargs = dict(reduction="bad", weight=lib.ones(3, 4)) if case == "bad_reduction" else dict(weight=lib.ones(4))
        with pytest.raises(Exception) as info:
            getattr(lib.nn.functional, name)(x, y, **kwargs)
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]
