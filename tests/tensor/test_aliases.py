"""torch's documented aliases (multiply, subtract, divide, greater, less_equal, ...) and the in-place
forms of Tensor's methods (x.floor_(), x.clamp_min_(0), x.addcmul_(a, b)), checked against torch 2.13.

An alias is declared where its function is: the one function under two names, not a copy."""
import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

# alias -> the function it names, as torch documents them
ALIASES = {"multiply": "mul", "subtract": "sub", "divide": "div", "negative": "neg", "absolute": "abs",
           "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
           "concatenate": "cat", "concat": "cat", "ger": "outer", "clip": "clamp", "fix": "trunc",
           "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2", "row_stack": "vstack",
           "swapdims": "swapaxes"}
TENSOR_ALIASES = ["multiply", "subtract", "divide", "negative", "absolute", "greater", "greater_equal", "less",
                  "less_equal", "not_equal", "ger", "clip", "fix", "true_divide"]


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_a_function_alias_is_the_function(alias):
    assert getattr(gradviz, alias) is getattr(gradviz, ALIASES[alias])


def _call(t, name, method):
    a = t.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=t.float64, requires_grad=True)
    b = t.tensor([[2.0, 1.0, 3.0], [0.5, -4.0, 2.0]], dtype=t.float64)
    args = {"cat": ([a, b],), "concat": ([a, b],), "concatenate": ([a, b],), "row_stack": ([a, b],),
            "ger": (a[0], b[0]), "outer": (a[0], b[0]), "clip": (a, -1.0, 2.0), "clamp": (a, -1.0, 2.0),
            "swapaxes": (a, 0, 1), "swapdims": (a, 0, 1)}.get(name)
    if args is None:
        args = (a,) if name in ("negative", "absolute", "fix", "neg", "abs", "trunc", "arccos", "arcsin", "arctan") \
            else (a, b)
    if name in ("arccos", "arcsin"):
        args = (a / 5,)
    out = getattr(args[0], name)(*args[1:]) if method else getattr(t, name)(*args)
    grad = None
    if out.requires_grad:
        out.sum().backward()
        grad = a.grad.numpy().tolist()
    return str(out.dtype), out.detach().numpy().tolist(), type(out.grad_fn).__name__, grad


@needs_torch
@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_function_aliases_compute_as_torch(alias):
    assert _call(gradviz, alias, False) == _call(real_torch, alias, False)


@needs_torch
@pytest.mark.parametrize("alias", TENSOR_ALIASES)
def test_tensor_aliases_compute_as_torch(alias):
    assert _call(gradviz, alias, True) == _call(real_torch, alias, True)


# in-place forms: (name, arguments after self) on a float tensor in (0.1, 0.9)
INPLACE = [("floor", ()), ("ceil", ()), ("round", ()), ("trunc", ()), ("frac", ()), ("clamp_min", (0.5,)),
           ("clamp_max", (0.5,)), ("clip", (0.2, 0.6)), ("tril", ()), ("triu", (1,)), ("cumsum", (0,)),
           ("cumprod", (1,)), ("square", ()), ("rsqrt", ()), ("log1p", ()), ("expm1", ()), ("log2", ()),
           ("tan", ()), ("sinh", ()), ("asin", ()), ("arccos", ()), ("erf", ()), ("logit", ()), ("sign", ()),
           ("nan_to_num", ()), ("multiply", ("other",)), ("subtract", ("other",)), ("divide", ("other",)),
           ("true_divide", ("other",)), ("negative", ()), ("absolute", ()), ("fmod", ("other",)),
           ("remainder", ("other",)), ("hypot", ("other",)), ("atan2", ("other",)), ("xlogy", ("other",)),
           ("addcmul", ("other", "other")), ("addcdiv", ("other", "other")), ("lerp", ("other", 0.3)),
           ("addmm", ("matrix", "matrix")), ("eq", ("other",)), ("lt", ("other",)), ("less_equal", ("other",))]


def _inplace(t, name, args, grad):
    x = t.tensor(np.linspace(0.1, 0.9, 9).reshape(3, 3), dtype=t.float64)
    w = x.clone().requires_grad_(grad)
    x = w * 1
    args = [x.detach() * 2 + 0.5 if a == "other" else t.ones(3, 3, dtype=t.float64) if a == "matrix" else a
            for a in args]
    out = getattr(x, name + "_")(*args)
    result = [out is x, str(out.dtype), x.detach().numpy().tolist(), x._version]
    if grad and out.requires_grad:
        out.sum().backward()
        result += [type(out.grad_fn).__name__, w.grad.numpy().tolist()]
    return result


@needs_torch
@pytest.mark.parametrize("grad", [False, True], ids=["values", "recorded"])
@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_forms_as_torch(name, args, grad):
    ours, theirs = _inplace(gradviz, name, args, grad), _inplace(real_torch, name, args, grad)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-15, atol=0)
    assert ours[:2] + ours[3:4] == theirs[:2] + theirs[3:4]
    if grad and name not in ("eq", "lt", "less_equal"):   # a comparison's in-place result keeps no history here
        assert ours[4] == theirs[4]
        np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-14)


@needs_torch
def test_every_inplace_form_torch_has_for_a_method_gradviz_has():
    """Tensor.NAME_ exists wherever Tensor.NAME does and torch has both."""
    missing = [n for n in dir(real_torch.Tensor) if n.endswith("_") and not n.startswith("_")
               and hasattr(gradviz.Tensor, n[:-1]) and not hasattr(gradviz.Tensor, n)]
    assert missing == []
