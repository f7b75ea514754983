"""torch's calling conventions (NumPy's argument names, out=) are part of how a function is declared:
the function a module defines is the one gradviz exports, and it takes them."""
import inspect
import sys

import numpy as np
import pytest

import gradviz
import gradviz.nn.functional as nn_functional
from gradviz import _calling, functions
from gradviz.functions import declared
from gradviz.ops import registry


def public_functions() -> dict:
    return {name: fn for name, fn in vars(gradviz).items()
            if not name.startswith("_") and inspect.isfunction(fn) and fn.__module__.startswith("gradviz")}


def made_functions() -> list:
    return [declared.made(op) for op in registry.ops().values() if op.expose is not None and op.expose.make]


def expected_aliases(fn, name: str) -> set:
    """The NumPy names torch's argument parser gives a function of this signature."""
    if name in _calling._PYTHON_DEFINED:
        return set()
    params = set(inspect.signature(_calling.plain(fn)).parameters)
    return {alias for alias, canonical in _calling._ALIASES.items() if canonical in params and alias not in params}


def test_each_export_is_the_function_its_module_defines():
    made = {id(fn) for fn in made_functions()}
    for name, fn in public_functions().items():
        owner = sys.modules[fn.__module__]
        assert getattr(owner, fn.__name__, None) is fn or id(fn) in made, name
        if hasattr(functions, name):
            assert getattr(functions, name) is fn, name


def test_every_public_function_takes_numpy_names_and_its_declared_out():
    outs = declared.out_names()
    for name, fn in public_functions().items():
        params = set(inspect.signature(_calling.plain(fn)).parameters)
        assert set(getattr(fn, "aliases", ())) == expected_aliases(fn, name), name
        assert getattr(fn, "takes_out", False) == (name in outs and "out" not in params), name


def test_every_public_method_takes_numpy_names():
    for name, fn in vars(gradviz.Tensor).items():
        if not name.startswith("_") and inspect.isfunction(fn):
            assert set(getattr(fn, "aliases", ())) == expected_aliases(fn, name), name
            assert not getattr(fn, "takes_out", False), name


def test_comparisons_and_the_functions_outside_gradviz_functions_keep_their_conventions():
    x = gradviz.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = gradviz.tensor([[1.0, 0.0], [3.0, 5.0]])
    for name in ("eq", "ne", "lt", "le", "gt", "ge", "isclose"):
        out = gradviz.zeros(2, 2, dtype=gradviz.bool)
        assert getattr(gradviz, name)(x1=x, x2=y, out=out) is out, name
        assert out.tolist() == getattr(gradviz, name)(x, y).tolist(), name
    assert gradviz.allclose(x1=x, x2=x) and gradviz.equal(a=x, other=x) and gradviz.numel(x=x) == 4
    for name in ("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"):
        assert getattr(gradviz, name)(x=x).shape == (2, 2), name
    assert gradviz.full_like(a=x, fill_value=7).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert gradviz.randint_like(x=x, high=3).shape == (2, 2)
    assert gradviz.bernoulli(x=gradviz.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    assert gradviz.multinomial(x=gradviz.tensor([0.0, 1.0]), num_samples=1).tolist() == [1]


def test_made_and_hand_written_functions_take_numpy_names_and_out():
    x = gradviz.tensor([0.5, 1.0])
    out = gradviz.zeros(2)
    assert np.allclose(gradviz.asinh(x=x).numpy(), np.arcsinh([0.5, 1.0]))   # made from its record
    assert gradviz.clip(x=x, min=0.0, max=0.75, out=out) is out and out.tolist() == [0.5, 0.75]
    assert gradviz.sum(gradviz.ones(2, 3), axis=1, keepdims=True).shape == (2, 1)
    with pytest.raises(TypeError, match=r"sum\(\) got multiple values for argument 'dim'"):
        gradviz.sum(x, dim=0, axis=0)


def test_methods_take_numpy_names_but_no_out():
    x = gradviz.ones(2, 3)
    assert x.cumsum(axis=1).tolist() == [[1.0, 2.0, 3.0]] * 2
    assert x.sum(axis=0, keepdims=True).shape == (1, 3)
    with pytest.raises(TypeError):
        x.exp(out=gradviz.zeros(2, 3))


@pytest.mark.parametrize("call", ["softmax(t, axis=1)", "sigmoid(t, out=t)", "relu(x=t)", "tanh(t, out=t)"])
def test_nn_functional_takes_neither_numpy_names_nor_out_as_torch(call):
    """torch.nn.functional writes these in Python, outside the argument parser: the same call is the same
    TypeError, in torch's words, though gradviz.softmax and gradviz.sigmoid take axis= and out=."""
    t = gradviz.randn(2, 3)
    name, keyword = call.split("(")[0], call.split(", ")[-1].split("=")[0].removeprefix(call.split("(")[0] + "(")
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument '{keyword}'$"):
        eval("F." + call, {"F": nn_functional, "t": t})
    assert not hasattr(gradviz, "compare")   # a helper of the comparisons, not a torch function
