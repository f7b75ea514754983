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
    """(node, output number) per input, where its gradient goes; None when no input requires grad
    (no edge leads anywhere, so the op records no node)."""
    n_inputs = len(inputs)
    if n_inputs == 2 or n_inputs == 1:   # Tensor._edge's two commonest answers, a node's output and a
        a = inputs[0]   # constant, given here
        node = a._grad_fn
        if a._view is None and (node is not None or not a._requires_grad):
            ea = (node, a.output_nr) if node is not None else (None, 0)
        else:
            ea = a._edge()
        if n_inputs == 1:
            return None if ea[0] is None else (ea,)
        b = inputs[1]
        node = b._grad_fn
        if b._view is None and (node is not None or not b._requires_grad):
            eb = (node, b.output_nr) if node is not None else (None, 0)
        else:
            eb = b._edge()
        return None if ea[0] is None and eb[0] is None else (ea, eb)
    found = tuple([t._edge() for t in inputs])
    for node, _ in found:
        if node is not None:
            return found
    return None


def one_dtype(a, b, tensor_type) -> bool:
    """Two Tensors (not a subclass) of one dtype: add and mul then have nothing to coerce or check."""
    return type(a) is type(b) is tensor_type and a._data.dtype is b._data.dtype
