"""Running one piece of code under PyTorch and under gradviz, and comparing what it prints.

A snippet is Python source that says `torch`; it runs once with `torch` bound to PyTorch
and once with `torch` bound to gradviz (as `import gradviz as torch` would), and what it
printed, with object addresses masked, is compared.
"""
from __future__ import annotations

import contextlib
import io
import re
import textwrap
import warnings

import numpy as np

import gradviz
import gradviz.nn.functional as F
from tests.support.op_inputs import graph_of

try:
    import torch as real_torch
except ImportError:   # the comparisons skip; the golden strings still run
    real_torch = None

needs_torch = __import__("pytest").mark.skipif(real_torch is None, reason="PyTorch is not installed")

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
# A case table's row is (name, prog, arrays, single): prog(t, Ft, *leaves) builds the output with
# library t and its functional namespace Ft; single says torch records it as one node.

def leaf(t, array, grad=True):
    """A float64 leaf of library t."""
    return t.tensor(array, dtype=t.float64, requires_grad=grad)


def case_ids(cases) -> list:
    return [c[0] for c in cases]


def run_program(t, Ft, prog, arrays):
    """Run prog on fresh float64 leaves and backward from a fixed random seed gradient."""
    xs = [leaf(t, a) for a in arrays]
    out = prog(t, Ft, *xs)
    seed = np.random.default_rng(7).standard_normal(tuple(out.shape))
    out.backward(t.tensor(seed, dtype=t.float64))
    return out, xs


def assert_program_matches_torch(prog, arrays, graph: str = "whole") -> None:
    """Value, every leaf's gradient and the graph agree with PyTorch's. graph: "whole" compares
    every node and edge, "root" the output's grad_fn name only, "none" nothing of the graph."""
    theirs, txs = run_program(real_torch, real_torch.nn.functional, prog, arrays)
    ours, gxs = run_program(gradviz, F, prog, arrays)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    for i, (a, b) in enumerate(zip(gxs, txs)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=f"x{i}.grad")
    if graph == "root":
        assert ours.grad_fn.name() == theirs.grad_fn.name()
    elif graph == "whole":
        assert graph_of(ours.grad_fn, gxs) == graph_of(theirs.grad_fn, txs)
