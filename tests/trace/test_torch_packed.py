"""A GRU over a packed batch of padded sequences (pack_padded_sequence, enforce_sorted=False): on CPU
torch runs it op by op, gates and slices for every step of every sequence length, a graph whose
middle folds into a band with paths through it. It draws and animates with torch's node names and
gradients, and leaves .grad as it was."""
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.torch_bridge import record_torch  # noqa: E402
from tests.support.torch_models import torch_walk  # noqa: E402

pytestmark = pytest.mark.torch


class PackedGRU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(12, 5)
        self.rnn = torch.nn.GRU(5, 6, batch_first=True)
        self.head = torch.nn.Linear(6, 3)

    def forward(self, tokens, lengths):
        packed = torch.nn.utils.rnn.pack_padded_sequence(self.emb(tokens), lengths, batch_first=True,
                                                         enforce_sorted=False)
        _, h = self.rnn(packed)
        return self.head(h[-1])


def packed_gru():
    torch.manual_seed(0)
    model = PackedGRU()
    tokens = torch.randint(1, 12, (3, 4))
    loss = torch.nn.functional.cross_entropy(model(tokens, torch.tensor([4, 2, 3])), torch.tensor([0, 2, 1]))
    return model, loss


def test_a_packed_gru_draws_and_animates_with_torchs_names_and_gradients(tmp_path):
    model, loss = packed_gru()
    gradviz.draw(loss, model=model).save(tmp_path / "gru.svg")
    animation = gradviz.animate(loss, model=model)
    trace = animation.trace
    assert Counter(n.name for n in trace.nodes if n.kind in ("op", "accumulate")) == torch_walk(loss)
    assert all(p.grad is None for p in model.parameters())
    params = dict(model.named_parameters())
    grads = dict(zip(params, torch.autograd.grad(loss, list(params.values()), retain_graph=True)))
    leaves = {n.name: n for n in record_torch(loss, model=model).run().nodes if n.kind == "leaf"}
    for name, grad in grads.items():
        shown = leaves[name].grad
        assert np.allclose(shown.stats, (grad.min(), grad.mean(), grad.max()), rtol=1e-4, atol=1e-7), name
