"""Saved tensors are packed in PyTorch 2.13's order: its generated nodes save their inputs sorted
by name (other before self, mat2 before self, exponent before self), then their outputs. A pack
hook that prints what it packs prints in torch's order."""
from __future__ import annotations

import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

# name -> program over the tensors a, b (3x3), c, d (3), img (1x2x5x5), w (3x2x3x3), ba, bb (2x3x3)
PROGRAMS = {
    "mul": lambda t, F, a, b, **k: a * b,
    "div": lambda t, F, a, b, **k: a / b,
    "matmul": lambda t, F, a, b, **k: a @ b,
    "mm": lambda t, F, a, b, **k: a.mm(b),
    "mv": lambda t, F, a, c, **k: a.mv(c),
    "bmm": lambda t, F, ba, bb, **k: ba.bmm(bb),
    "dot": lambda t, F, c, d, **k: c.dot(d),
    "outer": lambda t, F, c, d, **k: t.outer(c, d),
    "pow tensor": lambda t, F, a, b, **k: a.abs().pow(b),
    "pow scalar": lambda t, F, a, **k: a ** 3,
    "exp": lambda t, F, a, **k: a.exp(),
    "tanh": lambda t, F, a, **k: a.tanh(),
    "sigmoid": lambda t, F, a, **k: a.sigmoid(),
    "log": lambda t, F, a, **k: a.abs().log(),
    "sin": lambda t, F, a, **k: a.sin(),
    "sqrt": lambda t, F, a, **k: a.abs().sqrt(),
    "reciprocal": lambda t, F, a, **k: a.reciprocal(),
    "linear": lambda t, F, a, b, c, **k: F.linear(a, b, c),
    "linear without bias": lambda t, F, a, b, **k: F.linear(a, b),
    "addmm": lambda t, F, a, b, c, **k: t.addmm(c, a, b),
    "addmv": lambda t, F, a, c, d, **k: t.addmv(c, a, d),
    "addr": lambda t, F, a, c, d, **k: t.addr(a, c, d),
    "baddbmm": lambda t, F, ba, bb, **k: t.baddbmm(ba, ba, bb),
    "addcmul": lambda t, F, a, b, c, **k: t.addcmul(c, a, b),
    "addcdiv": lambda t, F, a, b, c, **k: t.addcdiv(c, a, b),
    "conv2d": lambda t, F, img, w, **k: F.conv2d(img, w),
    "conv2d with bias": lambda t, F, img, w, c, **k: F.conv2d(img, w, c),
    "softmax": lambda t, F, a, **k: a.softmax(-1),
    "log_softmax": lambda t, F, a, **k: a.log_softmax(-1),
    "relu": lambda t, F, a, **k: a.relu(),
    "maximum": lambda t, F, a, b, **k: t.maximum(a, b),
    "minimum": lambda t, F, a, b, **k: t.minimum(a, b),
    "atan2": lambda t, F, a, b, **k: t.atan2(a, b),
    "hypot": lambda t, F, a, b, **k: t.hypot(a, b),
    "fmax": lambda t, F, a, b, **k: t.fmax(a, b),
    "xlogy": lambda t, F, a, b, **k: t.xlogy(a, b),
    "logaddexp": lambda t, F, a, b, **k: t.logaddexp(a, b),
    "lerp tensor weight": lambda t, F, a, b, **k: t.lerp(a, b, b),
    "lerp scalar weight": lambda t, F, a, b, **k: t.lerp(a, b, 0.3),
    "remainder": lambda t, F, a, b, **k: t.remainder(a, b),
    "fmod": lambda t, F, a, b, **k: t.fmod(a, b),
    "clamp min and max tensors": lambda t, F, a, b, **k: t.clamp(a, b, b + 1),
    "dist": lambda t, F, a, b, **k: t.dist(a, b),
    "cdist": lambda t, F, a, b, **k: t.cdist(a, b),
    "cross": lambda t, F, a, b, **k: t.linalg.cross(a, b),
    "mse_loss": lambda t, F, a, b, **k: F.mse_loss(a, b),
    "huber_loss": lambda t, F, a, b, **k: F.huber_loss(a, b),
    "smooth_l1_loss": lambda t, F, a, b, **k: F.smooth_l1_loss(a, b),
    "binary_cross_entropy": lambda t, F, a, b, **k: F.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
    "binary_cross_entropy_with_logits": lambda t, F, a, b, **k: F.binary_cross_entropy_with_logits(a, b),
    "prelu": lambda t, F, a, c, **k: F.prelu(a, c[:1]),
    "norm": lambda t, F, a, **k: a.norm(),
    "prod": lambda t, F, a, **k: a.prod(),
    "std": lambda t, F, a, **k: a.std(),
    "logsumexp": lambda t, F, a, **k: a.logsumexp(1),
    "cumprod": lambda t, F, c, **k: c.cumprod(0),
    "gelu": lambda t, F, a, **k: F.gelu(a),
    "silu": lambda t, F, a, **k: F.silu(a),
    "softplus": lambda t, F, a, **k: F.softplus(a),
    "elu": lambda t, F, a, **k: F.elu(a),
    "scaled_dot_product_attention": lambda t, F, ba, bb, **k: F.scaled_dot_product_attention(ba, bb, ba),
    "abs": lambda t, F, a, **k: a.abs(),
    "var": lambda t, F, a, **k: a.var(),
    "erf": lambda t, F, a, **k: a.erf(),
    "times a Python number": lambda t, F, a, **k: a * 3,
    "divided by a Python number": lambda t, F, a, **k: a / 2,
    "times a 0-d tensor": lambda t, F, a, **k: a * t.tensor(3.0),
    "a Python number minus": lambda t, F, a, **k: 3 - a,
}


def packing_order(lib, program) -> list[str]:
    """Which tensor each pack-hook call received: an input's name, `out`, or a temporary's shape."""
    lib.manual_seed(0)
    names = dict(a=(3, 3), b=(3, 3), c=(3,), d=(3,), img=(1, 2, 5, 5), w=(3, 2, 3, 3), ba=(2, 3, 3), bb=(2, 3, 3))
    tensors = {n: lib.randn(*shape, requires_grad=True) for n, shape in names.items()}
    packed = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        out = program(lib, lib.nn.functional, **tensors)

    def role(t):
        found = [n for n, x in tensors.items() if t is x]
        if found:
            return found[0]
        if t.shape == out.shape and lib.allclose(t.detach(), out.detach(), equal_nan=True):
            return "out"
        return f"a temporary of shape {list(t.shape)}"
    return [role(t) for t in packed]


@needs_torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_pack_hook_sees_torchs_order(name):
    assert packing_order(gradviz, PROGRAMS[name]) == packing_order(real_torch, PROGRAMS[name])


def test_a_python_number_is_never_packed():
    """torch's wrapped numbers skip the hooks; the gradient through them is still right."""
    a = gradviz.ones(2, requires_grad=True)
    seen = []
    with gradviz.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        (a * 3).sum().backward()
    assert seen == [] and a.grad.tolist() == [3.0, 3.0]


def test_mul_packs_other_before_self():
    a, b = gradviz.ones(2, requires_grad=True), gradviz.full((2,), 2.0, requires_grad=True)
    seen = []
    with gradviz.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t[0].item()) or t, lambda t: t):
        (a * b).sum().backward()
    assert seen == [2.0, 1.0]
    assert a.grad.tolist() == [2.0, 2.0]
