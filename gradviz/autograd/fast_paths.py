"""The speed shortcuts of the per-op path, kept in one place so the code that uses them reads plainly.

Each one does what the plain code beside it would do, only cheaper in CPython: a chain of
small ops spends most of its time in the interpreter, not in NumPy.

- `forward`: an op's forward called with plain arguments for one and two inputs.
- `edges`: the graph edges of an op's inputs, likewise (None: no input requires grad).
- `one_dtype`: two plain Tensors of one dtype, which add and mul run without coercion.
"""
from __future__ import annotations

from numpy import ndarray   # one global load where np.ndarray is two

from ..ops.core import NUMPY, namespace
from .nodes import _ZEROS, edges_apart


def forward(op, inputs: tuple, params: tuple):
    """`op.forward` on the inputs' arrays; one and two inputs build no lists (a call with *args
    costs a tuple and a list)."""
    n_inputs = len(inputs)
    if n_inputs == 2:
        first = inputs[0]._data
        xp = NUMPY if type(first) is ndarray else namespace(first)
        return op.forward(xp, first, inputs[1]._data, *params) if params else \
            op.forward(xp, first, inputs[1]._data)
    if n_inputs == 1:
        first = inputs[0]._data
        xp = NUMPY if type(first) is ndarray else namespace(first)
        return op.forward(xp, first, *params) if params else op.forward(xp, first)
    arrays = [t._data for t in inputs]
    first = arrays[0]
    return op.forward(NUMPY if type(first) is ndarray else namespace(first), *arrays, *params)


def edges(inputs: tuple) -> tuple | None:
    """Where each input's gradient goes, as a Node keeps it: (next nodes, their output numbers); None
    when no input requires grad (no edge leads anywhere, so the op records no node)."""
    n_inputs = len(inputs)
    if n_inputs == 2 or n_inputs == 1:   # Tensor._edge's two commonest answers, a node's output and a
        a = inputs[0]   # constant, given here
        na = a._grad_fn
        if a._view is None and (na is not None or not a._requires_grad):
            ra = a.output_nr if na is not None else 0
        else:
            na, ra = a._edge()
        if n_inputs == 1:
            return None if na is None else ((na,), _ZEROS[1] if ra == 0 else (ra,))
        b = inputs[1]
        nb = b._grad_fn
        if b._view is None and (nb is not None or not b._requires_grad):
            rb = b.output_nr if nb is not None else 0
        else:
            nb, rb = b._edge()
        if na is None and nb is None:
            return None
        return (na, nb), _ZEROS[2] if ra == 0 and rb == 0 else (ra, rb)
    found = [t._edge() for t in inputs]
    for node, _ in found:
        if node is not None:
            return edges_apart(found)
    return None


def one_dtype(a, b, tensor_type) -> bool:
    """Two Tensors (not a subclass) of one dtype: add and mul then have nothing to coerce or check."""
    return type(a) is type(b) is tensor_type and a._data.dtype is b._data.dtype
