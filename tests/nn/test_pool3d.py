"""nn.MaxPool3d / nn.AvgPool3d / nn.AdaptiveMaxPool3d, nn.MaxUnpool1d/2d/3d and torch's shape and argument checks of the 1-, 2- and 3-d pools:
reprs, indices and every error message against PyTorch (values and gradients: tests/ops/test_conv.py)."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz
import gradviz.nn.functional as F

X = np.random.default_rng(3).permutation(np.linspace(-2, 2, 2 * 2 * 5 * 6 * 7)).reshape(2, 2, 5, 6, 7)

MODULES = ["MaxPool3d(3, 2, 1)", "MaxPool3d((1, 2, 2), dilation=(1, 2, 1), ceil_mode=True)",
           "AdaptiveMaxPool3d((2, None, 3))", "AdaptiveMaxPool3d(4)",
           "AvgPool3d((2, 3, 3))", "AvgPool3d(2, stride=1, padding=1, ceil_mode=True, count_include_pad=False, "
           "divisor_override=2)"]


@needs_torch
@pytest.mark.parametrize("make", MODULES)
def test_module_repr_values_and_grad_fn_match_torch(make):
    ours, theirs = eval("gradviz.nn." + make), eval("torch.nn." + make)
    assert repr(ours) == repr(theirs)
    x, xt = gradviz.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    y, yt = ours(x), theirs(xt)
    assert y.grad_fn.name() == yt.grad_fn.name()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    assert dict(ours.state_dict()) == {} == dict(theirs.state_dict())


@needs_torch
@pytest.mark.parametrize("batch", [X, X[0], X[:0]], ids=["batched", "unbatched", "empty-batch"])
def test_max_pool3d_indices_match_torch(batch):
    y, i = F.max_pool3d(gradviz.tensor(batch), (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), return_indices=True)
    yt, it = torch.nn.functional.max_pool3d(torch.tensor(batch), (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
                                            return_indices=True)
    assert i.dtype == gradviz.int64 and tuple(i.shape) == tuple(it.shape)
    np.testing.assert_array_equal(i.numpy(), it.numpy())
    np.testing.assert_array_equal(y.numpy(), yt.numpy())


BAD = [
    "max_pool3d(L.ones(1, 1, 4, 4), 2)", "avg_pool3d(L.ones(1, 1, 4, 4), 2)",
    "avg_pool3d(L.ones(1, 1, 1, 4, 4), 2, padding=1)", "max_pool3d(L.ones(1, 3, 4), 2)",
    "avg_pool3d(L.ones(1, 3, 4), 2)", "max_pool3d(L.ones(1, 1, 4, 4, 4), 0)",
    "max_pool3d(L.ones(1, 1, 4, 4, 4), 2, padding=2)", "max_pool3d(L.ones(1, 1, 4, 4, 4), (2, 2))",
    "max_pool3d(L.ones(1, 1, 4, 4, 4), 2, (1, 1))", "max_pool3d(L.ones(1, 1, 4, 4, 4), 2, 1, (1, 1))",
    "max_pool3d(L.ones(1, 1, 4, 4, 4), 2, 1, 0, (1, 1))", "avg_pool3d(L.ones(1, 1, 4, 4, 4), (2, 2))",
    "avg_pool3d(L.ones(1, 1, 4, 4, 4), 2, (1, 1))", "avg_pool3d(L.ones(1, 1, 4, 4, 4), 2, 1, (1, 1))",
    "max_pool2d(L.ones(1, 1, 4, 4), (2, 2, 2))", "avg_pool2d(L.ones(1, 1, 4, 4), 2, (1, 1, 1))",
    "avg_pool2d(L.ones(1, 1, 4, 4), (2, 2, 2))", "avg_pool2d(L.ones(1, 1, 4, 4), 2, 1, (1, 1, 1))",
    "max_pool2d(L.ones(1, 1, 1, 4), 2)", "avg_pool2d(L.ones(1, 1, 1, 4), 2)", "max_pool2d(L.ones(1, 1, 4), 2)",
    "max_pool2d(L.ones(1, 1, 1, 4), 2, return_indices=True)", "max_pool1d(L.ones(1, 1, 1), 2)",
    "max_pool1d(L.ones(1, 1, 1), 2, return_indices=True)", "avg_pool1d(L.ones(1, 1, 1), 2)",
    "max_pool3d(L.ones(1, 1, 1, 4, 5), (1, 3, 2), padding=(0, 1, 1), dilation=(1, 3, 1))",
]


def _error(L, call):
    try:
        eval("L.nn.functional." + call)
    except RuntimeError as e:
        return str(e)
    return None


@needs_torch
@pytest.mark.parametrize("call", BAD)
def test_bad_pool_arguments_raise_torchs_words(call):
    theirs = _error(torch, call)
    assert theirs is not None
    assert _error(gradviz, call) == theirs


@needs_torch
@pytest.mark.parametrize("make", ["MaxUnpool2d(2)", "MaxUnpool2d((2, 3), padding=1)", "MaxUnpool1d(3, stride=2)",
                                  "MaxUnpool3d(2)", "MaxUnpool3d((2, 1, 2), stride=1, padding=(0, 1, 0))"])
def test_unpool_module_reprs_match_torch(make):
    assert repr(eval("gradviz.nn." + make)) == repr(eval("torch.nn." + make))


@needs_torch
@pytest.mark.parametrize("batch", [X, X[0]], ids=["batched", "unbatched"])
def test_max_unpool3d_module_undoes_max_pool3d_as_torch(batch):
    results = []
    for lib in (gradviz, torch):
        x = lib.tensor(batch, requires_grad=True)
        y, i = lib.nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), return_indices=True)(x)
        u = lib.nn.MaxUnpool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0))(y, i, output_size=batch.shape[-3:])
        u.pow(2).sum().backward()
        results.append((u.grad_fn.name(), tuple(u.shape), u.detach().numpy(), x.grad.numpy()))
    (name, shape, u, g), (name_t, shape_t, u_t, g_t) = results
    assert (name, shape) == (name_t, shape_t) == ("MaxUnpool3DBackward0", batch.shape)
    np.testing.assert_array_equal(u, u_t)
    np.testing.assert_allclose(g, g_t, rtol=1e-12)


UNPOOL_BAD = [
    "max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.int64), 2, output_size=(7, 7))",
    "max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.int64), 2, output_size=(1, 2, 3))",
    "max_unpool2d(L.ones(1, 1, 1, 2), L.tensor([[[[1, 30]]]]), 2)",
    "max_unpool1d(L.ones(1, 1, 2), L.tensor([[[1, 9]]]), 2)",
]


@needs_torch
@pytest.mark.parametrize("call", UNPOOL_BAD)
def test_bad_unpool_arguments_raise_torchs_words(call):
    outcomes = []
    for lib in (gradviz, torch):
        try:
            eval("L.nn.functional." + call, {"L": lib})
            outcomes.append(None)
        except (RuntimeError, ValueError) as e:
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] is not None and outcomes[0] == outcomes[1]
