"""The one PyTorch parity harness: the same code under PyTorch and under gradviz, compared.

A snippet is Python source that says `torch`; it runs once with `torch` bound to PyTorch
and once with `torch` bound to gradviz (as `import gradviz as torch` would), and what it
printed, with object addresses masked, is compared. A program is a function fn(t, *leaves)
(the rows of tests/ops/cases.py): assert_matches_torch compares its values, dtypes, gradients
and grad_fn graph, assert_second_derivatives_match_torch its second derivatives, and
assert_raises_as_torch the error it raises.
"""
from __future__ import annotations

import contextlib
import io
import re
import textwrap
import warnings

import numpy as np
import pytest

import gradviz
from tests.support.op_inputs import graph_of, requires_grad, rng_for, sample

try:
    import torch as real_torch
except ImportError:   # the comparisons skip; the golden strings still run
    real_torch = None

needs_torch = pytest.mark.skipif(real_torch is None, reason="PyTorch is not installed")

ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def mask(text: str) -> str:
    """Object addresses vary from run to run: <MulBackward0 object at 0x...>."""
    return ADDRESS.sub("0x…", text)


def run_snippet(source: str, module) -> tuple[str, list[str]]:
    """Exec `source` with `torch` bound to `module`; return (printed text, warning messages)."""
    out = io.StringIO()
    namespace = {"torch": module, "__name__": "__snippet__"}
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        exec(compile(source, "<snippet>", "exec"), namespace)
    # torch appends where in its C++ sources a warning was raised; that part is not the message
    messages = [re.sub(r" \(Triggered internally at .*\)$", "", str(w.message), flags=re.S) for w in caught]
    return mask(out.getvalue()), messages


def gradviz_output(source: str) -> tuple[str, list[str]]:
    return run_snippet(source, gradviz)


def torch_output(source: str) -> tuple[str, list[str]]:
    return run_snippet(source, real_torch)


def same_output(*parts: str) -> str:
    """Run the (dedented, joined) snippet under both libraries; what it printed and warned must be
    the same. Returns the printed text, for further checks."""
    source = "\n".join(textwrap.dedent(part) for part in parts)
    ours, theirs = gradviz_output(source), torch_output(source)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    return ours[0]


# -- one program, both libraries ----------------------------------------------------------------
# A program is fn(t, *leaves): written once against a library t, gradviz or torch. Its inputs are
# (shape, domain[, requires_grad]) specs or fixed arrays (tests/support/op_inputs.py).

def leaf(t, array, grad=True):
    """A float64 leaf of library t."""
    return t.tensor(array, dtype=t.float64, requires_grad=grad)


def case_ids(cases) -> list:
    return [c[0] for c in cases]


def _node_name(node) -> str:
    return node.name().replace("torch::autograd::", "")


def _names_under(node) -> list:
    """The grad_fn names reachable from node, leaves' AccumulateGrad left out, sorted."""
    names, stack, seen = [], [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if _node_name(n) != "AccumulateGrad":
            names.append(_node_name(n))
        stack.extend(f for f, _ in n.next_functions)
    return sorted(names)


def _graphs(outs, leaves, graph: str) -> list:
    if graph == "whole":   # every node and edge, down to each leaf's AccumulateGrad, and which output it is
        return [(graph_of(o.grad_fn, leaves), o.output_nr if o.grad_fn is not None else 0) for o in outs]
    if graph == "names":
        return [_names_under(o.grad_fn) for o in outs]
    if graph == "root":
        return [None if o.grad_fn is None else _node_name(o.grad_fn) for o in outs]
    assert graph == "none", graph
    return []


def seed_gradient(shape) -> np.ndarray:
    """The gradient backward starts from: cos(0.5), cos(1.5), ... (no zeros, no two alike in a row)."""
    return np.cos(np.arange(int(np.prod(shape, dtype=int))) + 0.5).reshape(shape)


def _run(t, fn, arrays, flags, dtype, graph) -> dict:
    """fn on fresh leaves of t, then backward from the seed gradient."""
    xs = [t.tensor(a, dtype=getattr(t, dtype), requires_grad=f) for a, f in zip(arrays, flags)]
    out = fn(t, *xs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    result = {"values": [o.detach().numpy() for o in outs], "dtypes": [str(o.dtype) for o in outs],
              "shapes": [tuple(o.shape) for o in outs], "graphs": _graphs(outs, xs, graph)}
    diff = [o for o in outs if o.requires_grad]
    if diff:
        t.autograd.backward(diff, [t.tensor(seed_gradient(tuple(o.shape)), dtype=o.dtype) for o in diff])
    result["grads"] = [None if x.grad is None else x.grad.numpy() for x in xs]
    return result


def assert_matches_torch(fn, inputs, *, seed_text: str = "", dtype: str = "float64", rtol: float = 1e-10,
                         atol: float = 1e-12, grad_rtol: float | None = None, grad_atol: float | None = None,
                         graph: str = "whole") -> dict:
    """Run fn(t, *leaves) in PyTorch and in gradviz from the same inputs (in `dtype`, sampled from
    seed_text) and the same seed gradient: the outputs' shapes, dtypes and values, the grad_fn graph (graph: "whole" compares every
    node and edge, "names" the sorted node names, "root" the outputs' node, "none" nothing), and every
    leaf's .grad (None where torch's is None, its dtype, its values) must agree. Returns gradviz's run."""
    rng = rng_for(seed_text)
    arrays = [sample(s, rng) for s in inputs]
    flags = [requires_grad(s) for s in inputs]
    theirs = _run(real_torch, fn, arrays, flags, dtype, graph)
    ours = _run(gradviz, fn, arrays, flags, dtype, graph)
    assert ours["shapes"] == theirs["shapes"]
    assert ours["dtypes"] == theirs["dtypes"]
    for a, b in zip(ours["values"], theirs["values"]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    assert ours["graphs"] == theirs["graphs"]
    grad_rtol = rtol if grad_rtol is None else grad_rtol
    grad_atol = atol if grad_atol is None else grad_atol
    for i, (a, b) in enumerate(zip(ours["grads"], theirs["grads"])):
        assert (a is None) == (b is None), f"x{i}.grad: gradviz {a}, torch {b}"
        if a is not None:
            assert a.dtype == b.dtype, f"x{i}.grad: gradviz {a.dtype}, torch {b.dtype}"
            np.testing.assert_allclose(a, b, rtol=grad_rtol, atol=grad_atol, equal_nan=True, err_msg=f"x{i}.grad")
    return ours


def _second_derivatives(t, fn, arrays):
    """∂f/∂x·v with create_graph=True, then the gradient of (that · w): v and w drawn from "v"."""
    xs = [t.tensor(a, dtype=t.float64, requires_grad=True) for a in arrays]
    out = fn(t, *xs)
    rng = rng_for("v")
    v = t.tensor(rng.standard_normal(tuple(out.shape)), dtype=t.float64)
    gs = t.autograd.grad(out, xs, v, create_graph=True, allow_unused=True)
    s = sum((g * t.tensor(rng.standard_normal(tuple(g.shape)), dtype=t.float64)).sum() for g in gs if g is not None)
    hs = t.autograd.grad(s, xs, allow_unused=True) if getattr(s, "requires_grad", False) else [None] * len(xs)
    return [None if g is None else g.detach().numpy() for g in gs] + [
        np.zeros(np.shape(a)) if h is None else h.detach().numpy() for a, h in zip(arrays, hs)]


def assert_second_derivatives_match_torch(fn, inputs, *, seed_text: str = "", rtol: float = 1e-9,
                                          atol: float = 1e-10) -> None:
    """First gradients (create_graph=True) and the gradients of them agree with PyTorch's."""
    rng = rng_for(seed_text)
    arrays = [sample(s, rng) for s in inputs]
    for a, b in zip(_second_derivatives(gradviz, fn, arrays), _second_derivatives(real_torch, fn, arrays)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def assert_raises_as_torch(fn) -> None:
    """fn(t) raises in both libraries: gradviz's message holds the first line of PyTorch's, and its
    error is an instance of the builtin class PyTorch's derives from."""
    with pytest.raises(Exception) as theirs:
        fn(real_torch)
    with pytest.raises(Exception) as ours:
        fn(gradviz)
    assert str(theirs.value).split("\n")[0] in str(ours.value)
    builtin = next(c for c in type(theirs.value).__mro__ if c.__module__ == "builtins")
    assert isinstance(ours.value, builtin)
