"""Running one bad or edge input and reading how it ended, as plain data.

A case is a snippet of Python that says `torch`; its last statement's value is the outcome.
`outcome(snippet, module)` runs it with `torch` bound to `module` (gradviz or PyTorch) and
returns a library-neutral record: ("E", error type, message) when it raised, otherwise the
value with tensors as ("T", dtype, shape, values) and NaN/inf spelled as strings, so that a
recorded outcome is a Python literal that can live in a table.
"""
from __future__ import annotations

import ast
import math
import warnings

import numpy as np


def _number(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return float(f"{v:.7g}")
    return v


def _values(array) -> list:
    if array.dtype.kind == "f":
        return [_number(float(v)) for v in array.reshape(-1).tolist()]
    return array.reshape(-1).tolist()


def normalize(value):
    """A library-neutral, literal form of a result."""
    kind = type(value).__module__.split(".")[0]
    name = type(value).__name__
    if name == "Tensor" and kind in ("torch", "gradviz"):
        array = value.detach().cpu().numpy() if kind == "torch" else value.detach().numpy(force=True)
        dtype = str(value.dtype).replace("torch.", "")
        return ("T", dtype, tuple(array.shape), _values(np.asarray(array)))
    if name == "Size":
        return ("Size", tuple(value))
    if name == "dtype" and kind in ("torch", "gradviz"):
        return ("dtype", str(value).replace("torch.", ""))
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), tuple(value.shape), _values(value))
    if isinstance(value, np.dtype):
        return ("ndarray dtype", str(value))
    if isinstance(value, (list, tuple)):   # return_types (values, indices) read as tuples
        return tuple(normalize(v) for v in value) if isinstance(value, tuple) else [normalize(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return _number(value)
    return ("object", name)


def outcome(snippet: str, module):
    """Run the snippet with `torch` bound to module; ("E", type, message) or the normalized value."""
    return outcome_and_warnings(snippet, module)[0]


def outcome_and_warnings(snippet: str, module) -> tuple:
    """The snippet's outcome, and the first lines of the warnings it raised (deprecations aside)."""
    tree = ast.parse(snippet)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    namespace = {"torch": module}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(tree, "<case>", "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), "<case>", "eval"), namespace) if last else None
        except Exception as exc:   # the outcome is the error itself
            result = ("E", type(exc).__name__, str(exc).strip())
        else:
            result = normalize(value)
    warned = sorted({str(w.message).split("\n")[0] for w in caught if not issubclass(w.category, DeprecationWarning)})
    return result, warned


def _close(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    return a == b


def same(expected, actual) -> bool:
    """Equal outcomes: same structure, dtypes and shapes, values within float tolerance."""
    if isinstance(expected, (tuple, list)) and isinstance(actual, (tuple, list)):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual))
    return _close(expected, actual)


ERROR_TYPES = {name: getattr(__builtins__, name, None) if not isinstance(__builtins__, dict)
               else __builtins__.get(name) for name in
               ("RuntimeError", "IndexError", "TypeError", "ValueError", "ZeroDivisionError", "AttributeError",
                "NotImplementedError", "OverflowError", "KeyError")}


def raised_as(expected_type: str, actual_type: str) -> bool:
    """gradviz may raise a subclass of PyTorch's error type (NotImplementedError for RuntimeError)."""
    e, a = ERROR_TYPES.get(expected_type), ERROR_TYPES.get(actual_type)
    return expected_type == actual_type or (e is not None and a is not None and issubclass(a, e))
