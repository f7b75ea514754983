"""torch.nn.modules.sparse: Embedding."""
from __future__ import annotations

from ... import creation
from .. import functional as F
from ..parameter import Parameter
from .module import Module


class Embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, _weight=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            weight = creation.empty(num_embeddings, embedding_dim, dtype=dtype).normal_()   # N(0, 1), as PyTorch
            if padding_idx is not None:
                weight._data[padding_idx] = 0
        else:
            weight = _weight
        self.weight = Parameter(weight)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"
