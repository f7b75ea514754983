"""nn.utils.fusion: a conv (or transposed conv, or linear) and an eval-mode batch norm folded into
one layer, against PyTorch's fused weights and against running the two layers."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz

PAIRS = {
    "conv": (lambda L: L.nn.Conv2d(2, 3, 2), lambda L: L.nn.BatchNorm2d(3), (1, 2, 4, 4), {}),
    "conv_nobias": (lambda L: L.nn.Conv1d(2, 3, 2, bias=False), lambda L: L.nn.BatchNorm1d(3, affine=False),
                    (1, 2, 5), {}),
    "conv_transpose": (lambda L: L.nn.ConvTranspose2d(3, 2, 2), lambda L: L.nn.BatchNorm2d(2), (1, 3, 3, 3),
                       {"transpose": True}),
    "linear": (lambda L: L.nn.Linear(3, 4), lambda L: L.nn.BatchNorm1d(4), (5, 3), None),
}


def _fused(lib, name, state):
    make_layer, make_bn, shape, kwargs = PAIRS[name]
    layer, bn = make_layer(lib).double(), make_bn(lib).double()
    layer.load_state_dict({k: lib.tensor(v) for k, v in state[0].items()})
    bn.load_state_dict({k: lib.tensor(v) for k, v in state[1].items()})
    layer.eval(), bn.eval()
    fusion = lib.nn.utils.fusion
    fused = fusion.fuse_linear_bn_eval(layer, bn) if kwargs is None else fusion.fuse_conv_bn_eval(layer, bn, **kwargs)
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape))
    return fused, fused(x), bn(layer(x))


@needs_torch
@pytest.mark.parametrize("name", PAIRS)
def test_fused_layer_matches_torch_and_the_unfused_pair(name):
    torch.manual_seed(0)
    make_layer, make_bn, shape, _ = PAIRS[name]
    layer, bn = make_layer(torch).double(), make_bn(torch).double()
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    if bn.affine:
        bn.weight.data.uniform_(0.5, 2)
        bn.bias.data.uniform_(-1, 1)
    state = [{k: v.detach().numpy() for k, v in m.state_dict().items()} for m in (layer, bn)]
    ours, y, y_pair = _fused(gradviz, name, state)
    theirs, yt, _ = _fused(torch, name, state)
    assert repr(ours) == repr(theirs)
    assert isinstance(ours.weight, gradviz.nn.Parameter) and ours.weight.is_leaf and ours.weight.requires_grad
    for a, b in ((ours.weight, theirs.weight), (ours.bias, theirs.bias), (y, yt), (y, y_pair)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_fusion_refuses_a_layer_in_training_mode():
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        gradviz.nn.utils.fusion.fuse_conv_bn_eval(gradviz.nn.Conv2d(1, 1, 1), gradviz.nn.BatchNorm2d(1).eval())
