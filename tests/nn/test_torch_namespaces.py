"""gradviz's namespaces against torch 2.13's: a name both have is the same kind of thing (module,
class, function, value), and what gradviz has beyond torch is only what is listed here (each
listed on docs/fidelity.md with why). dir(gradviz.optim) is checked in tests/nn/test_optim.py."""
import importlib
import types

import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch

NAMESPACES = ["", ".Tensor", ".nn", ".nn.functional", ".nn.init", ".optim", ".autograd", ".utils.data", ".distributions",
              ".distributions.constraints",
              ".serialization", ".testing"]

# names gradviz has that torch's namespace lacks (module-level imports of the implementation aside)
OWN = {
    "": {"contiguous", "declare_ops", "expand", "gelu", "getitem", "leaky_relu", "repeat", "scope",
         "set_source_tracking", "softplus", "view"},
    ".nn.functional": {"SCALAR_TYPE", "apply", "check_class_weight", "div_scalar", "gru_cell", "lstm_cell",
                       "mul_scalar", "rnn_relu_cell", "rnn_tanh_cell"},
    ".nn.init": {"empty_like", "no_grad", "randperm", "to_numpy", "where"},
    ".autograd": {"AccumulateGrad", "Backward", "FunctionCtx", "Node", "Step", "backward_steps", "is_grad_enabled",
                  "is_inference_mode_enabled", "once_differentiable"},
    ".serialization": {"MAGIC", "PROTOCOL", "Parameter", "Size", "Tensor", "is_lazy"},
    ".testing": {"Size", "Tensor", "from_numpy_dtype", "promote_types"},
}
KIND_DIFFERS: set = set()   # (namespace, name) pairs whose kinds differ: none


def _get(root, path: str):
    obj = root
    for part in path.strip(".").split(".") if path else []:
        obj = getattr(obj, part, None)
        if obj is None:
            obj = importlib.import_module(f"{root.__name__}{path}")
            break
    return obj


def _kind(value) -> str:
    if isinstance(value, types.ModuleType):
        return "module"
    if isinstance(value, type):
        return "class"
    return "function" if callable(value) else "value"


def _public(namespace) -> set:
    return {n for n in dir(namespace) if not n.startswith("_") and n != "annotations"}


@pytest.mark.parametrize("path", NAMESPACES, ids=[p or "torch" for p in NAMESPACES])
def test_shared_names_are_the_same_kind(path):
    ours, theirs = _get(gradviz, path), _get(real_torch, path)
    shared = _public(ours) & _public(theirs)
    assert shared
    differs = {n for n in shared if _kind(getattr(ours, n)) != _kind(getattr(theirs, n))}
    assert differs == {n for p, n in KIND_DIFFERS if p == path}


@pytest.mark.parametrize("path", NAMESPACES, ids=[p or "torch" for p in NAMESPACES])
def test_what_gradviz_adds_is_listed(path):
    ours, theirs = _get(gradviz, path), _get(real_torch, path)
    extra = {n for n in _public(ours) - _public(theirs) if not isinstance(getattr(ours, n), types.ModuleType)}
    assert extra == OWN.get(path, set())
