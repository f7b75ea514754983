"""A tensor an op used without its gradient is drawn as the tensor it is, with the value the Trace
recorded (z = x ⊙ y, y = tensor(2.0)); a Python number stays a number in the formula (2x)."""
import json

import numpy as np
import pytest

import gradviz as gv
from gradviz.render.dot import to_dot
from gradviz.tracing import Trace


def _op(trace, name):
    return next(n for n in trace.nodes if n.name == name)


def test_a_tensor_constant_is_drawn_with_its_recorded_value():
    x = gv.tensor(1.0, requires_grad=True)
    y = gv.tensor(2.0)
    z = x * y
    trace = gv.draw(z, names={"x": x, "y": y, "z": z}).trace
    mul = _op(trace, "MulBackward0")
    assert mul.in_values[0] is None and float(mul.in_values[1].values) == 2.0
    dot = to_dot(trace)
    assert "z = x ⊙ y\\ny = tensor(2.0)" in dot
    y.data.fill_(5.0)   # the diagram reads the Trace, not the live tensor
    assert "y = tensor(2.0)" in to_dot(trace)


def test_the_value_survives_json_and_backward_leaves_its_shape():
    x = gv.tensor([1.0, 2.0], requires_grad=True)
    m = gv.tensor([1.0, 0.0])
    z = (x * m).sum()
    trace = gv.draw(z, names={"x": x, "m": m, "z": z}).trace
    back = Trace.from_json(json.loads(json.dumps(trace.to_json())))
    assert "m = tensor([1.0, 0.0])" in to_dot(back)
    z.backward()   # the node let go of its input, as torch's frees _saved_other: only its shape is known
    dot = to_dot(gv.draw(z, names={"x": x, "m": m, "z": z}).trace)
    assert ": tensor (2,) float32" in dot and "tensor([1.0" not in dot


def test_a_large_constant_shows_its_shape_and_a_number_stays_a_number():
    X = gv.randn(64, 10)
    W = gv.randn(10, 3, requires_grad=True)
    loss = (X @ W * 2).sum()
    dot = to_dot(gv.draw(loss, names={"X": X, "W": W}).trace)
    assert "X: tensor (64, 10) float32" in dot
    assert "= 2t₁" in dot and "tensor(2" not in dot


def test_hiding_values_hides_the_constants_values():
    x = gv.tensor(1.0, requires_grad=True)
    y = gv.tensor(2.0)
    dot = to_dot(gv.draw(x * y, names={"x": x, "y": y}).trace, show_values=False)
    assert "y: tensor () float32" in dot and "tensor(2.0)" not in dot


def test_the_torch_bridge_draws_a_named_tensor_constant_alike():
    torch = pytest.importorskip("torch")
    x = torch.tensor(1.0, requires_grad=True)
    y = torch.tensor(2.0)
    z = x * y
    trace = gv.draw(z, names={"x": x, "y": y, "z": z}).trace
    mul = _op(trace, "MulBackward0")
    assert dict(mul.constants).get("1") is None
    assert np.asarray(mul.in_values[1].values) == 2.0
    assert "z = x ⊙ y\\ny = tensor(2.0)" in to_dot(trace)
    assert "2x" in to_dot(gv.draw(x * 2, names={"x": x}).trace)


def _mask_twice(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    m = lib.tensor([1.0, 0.0])
    a = x * m
    b = (a + x) * m
    return x, m, a, b, b.sum()


def _scaled_twice(lib, x):
    k = lib.tensor([3.0, 4.0])   # no name the caller can see: numbered, once
    return (x * k * k).sum()


@pytest.mark.parametrize("lib", ["gradviz", "torch"])
def test_one_tensor_read_by_two_ops_has_one_name(lib):
    lib = gv if lib == "gradviz" else pytest.importorskip("torch")
    x, m, a, b, s = _mask_twice(lib)
    trace = gv.draw(s, names={"x": x, "m": m, "a": a, "b": b, "s": s}).trace
    muls = [n for n in trace.nodes if n.name == "MulBackward0"]
    assert [n.in_names[1] for n in muls] == ["m", "m"]
    dot = to_dot(trace)
    assert "a = x ⊙ m" in dot and "m₁" not in dot and "m₂" not in dot
    trace = gv.draw(_scaled_twice(lib, x), names={"x": x}).trace
    first, second = (n for n in trace.nodes if n.name == "MulBackward0")
    assert first.in_names[1] == second.in_names[1] != ""
    taken = [name for n in trace.nodes if n.kind == "op" for name in n.out_names]
    assert first.in_names[1] not in taken   # still a tensor of its own


def test_forward_mode_gives_one_tensor_read_twice_one_name():
    m = gv.tensor([1.0, 0.0])

    def f(x):
        return ((x * m + x) * m).sum()

    anim = gv.animate_jvp(f, (gv.tensor([1.0, 2.0]),), (gv.tensor([1.0, 0.0]),))
    assert [n.in_names[1] for n in anim.trace.nodes if n.name == "mul"] == ["m", "m"]
