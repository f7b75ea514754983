"""draw, animate and step given what is not a tensor (a number, a list of numbers, None, a model)
refuse it by name, for gradviz and for torch alike, before anything is recorded."""
from __future__ import annotations

import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

LIBS = [gradviz, pytest.param(real_torch, marks=[needs_torch, pytest.mark.torch])]


@pytest.mark.parametrize("lib", LIBS, ids=["gradviz", "torch"])
@pytest.mark.parametrize("fn", ["draw", "animate", "step"])
def test_a_root_that_is_not_a_tensor_is_refused_by_name(lib, fn):
    w = lib.ones(3, requires_grad=True)
    model = lib.nn.Linear(3, 1)
    for root, what in ((3, "int"), ([1.0, 2.0], "float"), (None, "NoneType"), (model, "Linear")):
        with pytest.raises(TypeError) as raised:
            getattr(gradviz, fn)(root)
        assert str(raised.value).startswith(f"{fn}() expected tensors (a loss, or the outputs of a graph), but "
                                            f"argument 0 is {what}")
    with pytest.raises(TypeError, match="argument 1 is int"):
        getattr(gradviz, fn)((w * 2).sum(), 3)
    assert w.grad is None and model.weight.grad is None


@pytest.mark.parametrize("lib", LIBS, ids=["gradviz", "torch"])
def test_a_model_given_in_place_of_its_output_says_what_to_pass(lib):
    with pytest.raises(TypeError, match=r"is Linear \(pass its output, or the loss computed from it\)"):
        gradviz.animate(lib.nn.Linear(3, 1))
