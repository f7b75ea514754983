"""Tensors take a program's own Python attributes (t.g = ...), as torch's do.

A course that writes backprop by hand stores each gradient as x.g; the attribute lives on
that object only (not on its views, clones or detached copies), and is copied, pickled and
saved with it, as in PyTorch 2.13.
"""
import io

import pytest

import gradviz
from tests.support.parity import needs_torch, same_output


def test_an_attribute_is_kept_and_read_back():
    t = gradviz.zeros(2)
    t.g = gradviz.ones(2)
    t.note = "weights"
    assert t.g.tolist() == [1.0, 1.0] and t.note == "weights"
    assert vars(t) == {"g": t.g, "note": "weights"}
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'h'"):
        t.h


def test_a_parameter_takes_attributes_too():
    p = gradviz.nn.Parameter(gradviz.ones(3))
    p.lr_scale = 0.5
    assert p.lr_scale == 0.5 and p.requires_grad


def test_saved_and_loaded_with_its_attributes():
    t = gradviz.arange(3.0)
    t.g = gradviz.ones(3)
    buffer = io.BytesIO()
    gradviz.save(t, buffer)
    buffer.seek(0)
    back = gradviz.load(buffer)
    assert back.tolist() == [0.0, 1.0, 2.0] and back.g.tolist() == [1.0, 1.0, 1.0]


@needs_torch
def test_attributes_follow_torch():
    same_output("""
        import copy, pickle, io
        t = torch.zeros(2)
        t.g = torch.ones(2)
        print(t.g, sorted(vars(t)))
        print(vars(t.detach()), vars(t.clone()), vars(t.view(2)), vars(t[0]), vars(t * 1))
        print(copy.deepcopy(t).g, copy.copy(t).g, pickle.loads(pickle.dumps(t)).g)
        buffer = io.BytesIO()
        torch.save({"w": t}, buffer)
        buffer.seek(0)
        print(torch.load(buffer)["w"].g)
        w = torch.ones(2, requires_grad=True)
        y = (w * 3).sum()
        y.backward()
        w.g = w.grad
        print(w.g, w.requires_grad)
    """)
