"""sort, argsort and topk: values are differentiable (a gather along dim), indices are not. The rows
of their gradients live in tests/ops/cases.py (group "sorting")."""
import numpy as np
import pytest
from tests.ops.cases import X_SORT as X

import gradviz as torch


def test_indices_and_names():
    x = torch.tensor([[3., 1., 2., 1.]], requires_grad=True)
    values, indices = x.sort(descending=True)
    assert values.grad_fn.name() == "SortBackward0" and not indices.requires_grad
    assert indices.tolist() == [[0, 2, 1, 3]]            # ties keep their order (stable)
    assert torch.argsort(x, dim=1).tolist() == [[1, 3, 2, 0]]
    top = torch.topk(x, 2)
    assert top.values.grad_fn.name() == "TopkBackward0" and top.indices.tolist() == [[0, 2]]
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(x, 5)


@pytest.mark.torch
def test_matches_torch():
    real = pytest.importorskip("torch")
    results = []
    for lib in (torch, real):
        x = lib.tensor(X, requires_grad=True)
        v = x.sort(dim=1, descending=True).values
        t = x.topk(3, dim=0).values
        ((v * lib.tensor([1., 2., 3., 4.])).sum() + (t * t).sum()).backward()
        results.append((v.detach().numpy(), t.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs)
