"""Batch and instance norms of every rank against torch: reprs, state_dict keys, outputs, input
gradients, grad_fn names and running statistics in train and eval mode, and the errors for an
input of the wrong rank."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz

CASES = [("BatchNorm1d", (4, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (2, 3, 4, 4)),
         ("BatchNorm3d", (2, 3, 2, 3, 2)), ("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)),
         ("InstanceNorm2d", (2, 3, 4, 4)), ("InstanceNorm2d", (3, 4, 4)), ("InstanceNorm3d", (2, 3, 2, 3, 2)),
         ("InstanceNorm3d", (3, 2, 3, 2))]
OPTIONS = [{}, {"affine": True, "track_running_stats": True}, {"affine": False, "track_running_stats": False},
           {"momentum": None}]


def _error(make):
    try:
        make()
    except Exception as e:  # noqa: BLE001 - the comparison is the point
        return type(e), str(e)
    return None


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,shape", CASES)
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_norm_module_matches_torch(name, shape, options):
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    theirs, ours = getattr(torch.nn, name)(3, **options), getattr(gradviz.nn, name)(3, **options)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    xt, xg = torch.tensor(x, requires_grad=True), gradviz.tensor(x, requires_grad=True)
    for training in (True, True, False):
        theirs.train(training), ours.train(training)
        yt, yg = theirs(xt), ours(xg)
        np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), atol=1e-5)
        assert yg.grad_fn.name() == yt.grad_fn.name()
        (yt * yt).sum().backward(), (yg * yg).sum().backward()
        np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), atol=1e-4)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), atol=1e-5)


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", sorted({name for name, _ in CASES}))
@pytest.mark.parametrize("shape", [(3,), (2, 3, 4, 4, 4, 4)])
def test_norm_module_rejects_the_wrong_rank_as_torch(name, shape):
    ours = _error(lambda: getattr(gradviz.nn, name)(3)(gradviz.zeros(shape)))
    assert ours is not None and ours == _error(lambda: getattr(torch.nn, name)(3)(torch.zeros(shape)))
