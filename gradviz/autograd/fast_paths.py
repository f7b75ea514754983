"""The speed shortcuts of the per-op path, kept in one place so the code that uses them reads plainly.

Each one does what the plain code beside it would do, only cheaper in CPython: a chain of
small ops spends most of its time in the interpreter, not in NumPy.

- `vjp_two_inputs`: a two-input op's VJP without the lists of the general call.
- `forward`: an op's forward called with plain arguments for one and two inputs.
- `edges`: the graph edges of an op's inputs, likewise.
- `one_dtype`: two plain Tensors of one dtype, which add and mul run without coercion.
"""
from __future__ import annotations

from numpy import ndarray   # one global load where np.ndarray is two

from ..ops.core import NUMPY, namespace


_NO_AXES_2 = ((), ())


def vjp_two_inputs(node, rule: tuple, xp, g, out, saved_inputs):
    """A two-input node's VJP, one rule per input (the common case: add, mul, matmul...).

    Returns the two gradients and their reduced axes when both already fit their inputs'
    shapes and dtypes (nothing to sum or cast), else the raw pair and None."""
    f0, f1 = rule
    (to0, _), (to1, _) = node.next_functions
    a0, a1 = saved_inputs[0]._data, saved_inputs[1]._data
    params = node.params
    if params:   # f(*args) with a ready tuple is much cheaper than f(xp, g, ..., *params)
        args = (xp, g, out, a0, a1) + params
        g0 = None if f0 is None or to0 is None else f0(*args)
        g1 = None if f1 is None or to1 is None else f1(*args)
    else:   # a plain call builds no tuple
        g0 = None if f0 is None or to0 is None else f0(xp, g, out, a0, a1)
        g1 = None if f1 is None or to1 is None else f1(xp, g, out, a0, a1)
    inputs = node.inputs
    if (g0 is None or (g0.shape == (a := inputs[0]._data).shape and g0.dtype is a.dtype)) and \
            (g1 is None or (g1.shape == (a := inputs[1]._data).shape and g1.dtype is a.dtype)):
        return (g0, g1), _NO_AXES_2
    return (g0, g1), None


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


def edges(inputs: tuple) -> tuple:
    """(node, output number) per input, where its gradient goes."""
    n_inputs = len(inputs)
    if n_inputs == 2:
        return (inputs[0]._edge(), inputs[1]._edge())
    if n_inputs == 1:
        return (inputs[0]._edge(),)
    return tuple([t._edge() for t in inputs])


def one_dtype(a, b, tensor_type) -> bool:
    """Two Tensors (not a subclass) of one dtype: add and mul then have nothing to coerce or check."""
    return type(a) is type(b) is tensor_type and a._data.dtype is b._data.dtype
