"""The deprecated size_average/reduce pair of every loss that takes it, against PyTorch 2.13:
the reduction it means (overriding `reduction`), the values and torch's UserWarning word for word."""
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
    # torch 2.13 gave mse_loss and l1_loss a trailing `weight` that gradviz does not take yet
    assert ours == (theirs[:-1] if name in ("mse_loss", "l1_loss") else theirs)


def test_the_legacy_pair_warns_at_the_callers_line():
    with pytest.warns(UserWarning, match=r"please use reduction='sum' instead\.") as caught:
        gradviz.nn.functional.mse_loss(gradviz.ones(2), gradviz.zeros(2), size_average=False)
    assert caught[0].filename == __file__
