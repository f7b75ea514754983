"""sort, argsort and topk: values are differentiable (a gather along dim), indices are not. The rows
of their gradients and of their PyTorch parity live in tests/ops/cases.py (group "sorting")."""
import pytest

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
