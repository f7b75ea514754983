"""Tensors as Python objects, as torch's: they take a program's own attributes (t.g = ...) and
their class prints as the package's (<class 'gradviz.Tensor'>, as <class 'torch.Tensor'>).

A course that writes backprop by hand stores each gradient as x.g; the attribute lives on
that object only (not on its views, clones or detached copies), and is copied, pickled and
saved with it, as in PyTorch 2.13.
"""
import io
import textwrap

import pytest

import gradviz
from tests.support.parity import gradviz_output, needs_torch, same_output, torch_output


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


def test_the_class_is_the_packages():
    assert gradviz.Tensor.__module__ == "gradviz" and repr(gradviz.Tensor) == "<class 'gradviz.Tensor'>"
    assert type(gradviz.ones(2)) is gradviz.Tensor
    p = gradviz.nn.Parameter(gradviz.ones(2))
    assert isinstance(p, gradviz.Tensor) and not isinstance([p], gradviz.Tensor)


@needs_torch
def test_types_print_as_torch():
    """What torch prints with its package's name, gradviz prints with its own."""
    source = textwrap.dedent("""
        import pickle
        t = torch.ones(2, requires_grad=True)
        print(type(t), type(t * 2), type(t).__name__, type(t).__qualname__, type(t).__module__, torch.is_tensor(t))
        print(type(pickle.loads(pickle.dumps(t))), pickle.loads(pickle.dumps(t)))
    """)
    ours, theirs = gradviz_output(source)[0], torch_output(source)[0]
    assert "<class 'gradviz.Tensor'>" in ours and ours.replace("gradviz", "torch") == theirs


def test_pickled_and_saved_under_the_new_name():
    import copy
    import pickle
    t = gradviz.ones(2, requires_grad=True)
    assert b"gradviz.tensor" not in pickle.dumps(t)
    back = pickle.loads(pickle.dumps(t))
    assert type(back) is gradviz.Tensor and back.requires_grad and back.tolist() == [1.0, 1.0]
    assert copy.deepcopy(t).tolist() == [1.0, 1.0]
    model = gradviz.nn.Linear(2, 3)
    buffer = io.BytesIO()
    gradviz.save({"model": model.state_dict(), "t": t}, buffer)
    buffer.seek(0)
    loaded = gradviz.load(buffer)
    assert loaded["model"]["weight"].tolist() == model.weight.tolist() and loaded["t"].requires_grad
