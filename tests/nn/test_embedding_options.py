"""nn.Embedding's full signature (max_norm, norm_type, scale_grad_by_freq, sparse, _freeze) and
from_pretrained of Embedding and EmbeddingBag, against PyTorch: reprs, the renormalized weight,
lookups, gradients and errors."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz

W = np.random.default_rng(3).standard_normal((6, 3)).astype(np.float32) * 2
IDX = [[1, 2, 2], [5, 0, 1]]


def both(fn):
    return fn(torch), fn(gradviz)


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"max_norm": 1.0}, {"max_norm": 1.5, "norm_type": 1.0},
                                    {"max_norm": 0.5, "norm_type": float("inf")}, {"sparse": True},
                                    {"scale_grad_by_freq": True}, {"_freeze": True}])
def test_embedding_options_repr_and_requires_grad(kwargs):
    def run(L):
        emb = L.nn.Embedding(6, 3, _weight=L.tensor(W), **kwargs)
        return repr(emb), emb.weight.requires_grad
    t, g = both(run)
    assert t == g


@needs_torch
@pytest.mark.parametrize("kwargs", [{"max_norm": 1.0}, {"max_norm": 1.5, "norm_type": 1.0},
                                    {"max_norm": 0.5, "norm_type": float("inf")}, {"max_norm": 2.0, "padding_idx": 0}])
def test_max_norm_renormalizes_the_rows_read_in_place(kwargs):
    def run(L):
        emb = L.nn.Embedding(6, 3, _weight=L.tensor(W), **kwargs)
        v0 = emb.weight._version
        out = emb(L.tensor(IDX))
        (out * L.tensor(np.arange(18.0, dtype=np.float32).reshape(2, 3, 3))).sum().backward()
        return out.detach().numpy(), emb.weight.detach().numpy(), emb.weight.grad.numpy(), emb.weight._version > v0
    (to, tw, tg, tv), (go, gw, gg, gv) = both(run)
    np.testing.assert_allclose(go, to, rtol=1e-6)
    np.testing.assert_allclose(gw, tw, rtol=1e-6)   # rows 3 and 4 (never read) keep their norm
    np.testing.assert_array_equal(gg, tg)
    assert tv and gv


@needs_torch
def test_functional_embedding_max_norm_matches_torch():
    def run(L):
        w = L.tensor(W)
        out = L.nn.functional.embedding(L.tensor([0, 3, 3]), w, max_norm=1.0)
        return out.numpy(), w.numpy()
    (to, tw), (go, gw) = both(run)
    np.testing.assert_allclose(go, to, rtol=1e-6)
    np.testing.assert_allclose(gw, tw, rtol=1e-6)


def test_scale_grad_by_freq_is_refused_not_ignored():
    emb = gradviz.nn.Embedding(6, 3, scale_grad_by_freq=True)
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        emb(gradviz.tensor([1, 1]))


@needs_torch
@pytest.mark.parametrize("freeze", [True, False])
def test_embedding_from_pretrained(freeze):
    def run(L):
        table = L.tensor(W)
        emb = L.nn.Embedding.from_pretrained(table, freeze=freeze, padding_idx=1)
        out = emb(L.tensor([[1, 4]]))
        return (repr(emb), emb.weight.requires_grad, emb.weight.data_ptr() == table.data_ptr(), out.detach().numpy().tolist(),
                out.requires_grad)
    t, g = both(run)
    assert t == g


@needs_torch
@pytest.mark.parametrize("freeze", [True, False])
def test_embedding_bag_from_pretrained(freeze):
    def run(L):
        bag = L.nn.EmbeddingBag.from_pretrained(L.tensor(W), freeze=freeze, mode="sum")
        out = bag(L.tensor([[1, 4], [0, 0]]))
        return repr(bag), bag.weight.requires_grad, out.detach().numpy().tolist()
    t, g = both(run)
    assert t[:2] == g[:2]
    np.testing.assert_allclose(g[2], t[2], rtol=1e-6)


@needs_torch
@pytest.mark.parametrize("cls", ["Embedding", "EmbeddingBag"])
def test_from_pretrained_needs_a_matrix(cls):
    for L in (torch, gradviz):
        with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
            getattr(L.nn, cls).from_pretrained(L.ones(3))


@needs_torch
def test_embedding_weight_of_the_wrong_shape_is_refused():
    for L in (torch, gradviz):
        with pytest.raises(AssertionError, match="Shape of weight does not match num_embeddings and embedding_dim"):
            L.nn.Embedding(5, 3, _weight=L.ones(4, 3))
