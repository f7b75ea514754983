"""Calling conventions torch's argument parser adds to every function: NumPy's argument names
(axis for dim, keepdims for keepdim, x/a/x1 for input, x2 for other) and `out=`.

They are part of how a function is declared: `@public` (gradviz.functions.public) and the
functions made from op records apply `wrap` where the function is defined, and the few other
exported functions (tensor creation, ...) and Tensor's methods say `@numpy_names`; so the
function a module defines is the one gradviz exports. A call without these keywords goes
straight through.
"""
from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from . import backend
from ._args import argument_error, is_tensor, type_name
from .dtypes import C_TYPE, SCALAR_TYPE

# torch's numpy_compatibility_arg_names (python_arg_parser.cpp)
_ALIASES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}

# functions torch writes in Python, outside its argument parser: they take no NumPy names
_PYTHON_DEFINED = frozenset({"norm", "split", "tensordot", "unique", "einsum", "meshgrid", "broadcast_shapes",
                             "broadcast_tensors", "cdist", "atleast_1d", "atleast_2d", "atleast_3d",
                             "unique_consecutive"})


def _parameters(fn) -> list:
    """fn's parameter names, in order (none when Python cannot tell)."""
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def _category(dtype) -> int:
    return 0 if dtype.kind == "b" else (2 if dtype.kind in "fc" else 1)


# functions whose out= may share no memory with an input (torch's assert_no_overlap); the others, as
# torch's elementwise kernels, take an input itself as out but refuse one that partly overlaps it
_NO_OVERLAP = frozenset({"gather", "index_select", "masked_select", "cat", "concat", "concatenate", "take",
                         "kthvalue"})

# functions whose out= must have the result's dtype (no cast), in their kernel's words
_SAME_DTYPE = {
    "gather": "Expected out tensor to have dtype {c_result}, but got {c_out} instead",
    "aminmax": "Expected out tensor to have dtype {c_result}, but got {c_out} instead",
    "amax": "Expected the dtype for input and out to match, but got {result} for input's dtype and {out} for out's "
            "dtype.",
    "amin": "Expected the dtype for input and out to match, but got {result} for input's dtype and {out} for out's "
            "dtype.",
}

_CLONE = "Please clone() the tensor before performing the operation."


def _dense(a) -> bool:
    return bool(a.flags.c_contiguous or a.flags.f_contiguous)


def _check_out_memory(name: str, out, inputs) -> None:
    """torch's refusal of an out= whose elements share memory with each other (an expand), or with an
    input's: partly (as two dense tensors tell it), or at all for the functions of _NO_OVERLAP."""
    out._check_overlap()
    dst = out._data
    xp = backend.namespace_of(dst)
    for t in inputs:
        src = t._data
        if src.size == 0 or dst.size == 0 or not (_dense(src) and _dense(dst)) or not xp.may_share_memory(src, dst):
            continue
        same = (src.__array_interface__["data"][0] == dst.__array_interface__["data"][0] if xp is np else
                src.data.ptr == dst.data.ptr) and src.shape == dst.shape and src.strides == dst.strides
        if not same or name in _NO_OVERLAP:
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               f"refer to a single memory location. {_CLONE}")


def _tensors_in(args: tuple, kwargs: dict) -> list:
    """The tensors a call was given, those in a list (cat's) too."""
    found = []
    for a in (*args, *kwargs.values()):
        found += [t for t in (a if isinstance(a, (list, tuple)) else (a,)) if is_tensor(t)]
    return found


def write_out(name: str, result, out, inputs=()):
    """Copy `result` into the caller's `out` tensor(s) as torch does: same dtype category or
    higher, resized (with torch's warning when it held elements) to the result's shape; checked
    first against the memory of `inputs`, the tensors the call was given."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors of length {len(result)}")
        for r, o in zip(result, out):   # every out checked before any is written
            _check_out(name, r, o, inputs)
        for r, o in zip(result, out):
            _copy_into(r, o)
        if hasattr(result, "_name"):   # torch.return_types.max -> torch.return_types.max_out
            named = type(result)(tuple(out))
            named._name = result._name + "_out"
            return named
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    _check_out(name, result, out, inputs)
    return _copy_into(result, out)


def _copy_into(result, out):
    """result's values written into the checked out (resized, with torch's warning, where its shape differs)."""
    src, dst = result._data, out._data
    if src.shape != dst.shape:
        if dst.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(dst.shape)}, "
                          f"which does not match the required output shape {list(src.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=4)
        out._data = src.astype(dst.dtype, copy=True)
    else:
        np.copyto(dst, src, casting="unsafe") if isinstance(dst, np.ndarray) else dst.__setitem__(..., src)
    out._bump()
    return out


def _check_out(name: str, result, out, inputs) -> None:
    """Everything torch checks of one out= tensor before writing into it."""
    if not is_tensor(out):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result.requires_grad or out.requires_grad:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    _check_out_memory(name, out, inputs)
    src, dst = result._data.dtype, out._data.dtype
    if name in _SAME_DTYPE and src != dst:
        raise RuntimeError(_SAME_DTYPE[name].format(c_result=C_TYPE[src.name], c_out=C_TYPE[dst.name],
                                                    result=SCALAR_TYPE[src.name], out=SCALAR_TYPE[dst.name]))
    if _category(src) > _category(dst):
        raise RuntimeError(f"result type {SCALAR_TYPE[src.name]} can't be cast to the desired output type "
                           f"{SCALAR_TYPE[dst.name]}")


def wrap(fn, name: str, takes_out: bool):
    """fn accepting torch's NumPy-style names and (when torch has it) out=; unchanged if neither applies.
    The wrapper keeps fn as `.plain`, for callers that never pass these keywords (Tensor's methods)."""
    params = _parameters(fn) if name not in _PYTHON_DEFINED else []
    aliases = {a: c for a, c in _ALIASES.items() if c in params and a not in params}
    takes_out = takes_out and "out" not in params
    if not aliases and not takes_out:
        return fn

    keywords = frozenset(aliases) | ({"out"} if takes_out else set())
    takes_input = params[:1] == ["input"]

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            if kwargs and not keywords.isdisjoint(kwargs):
                for alias, canonical in aliases.items():
                    if alias in kwargs:
                        if canonical in kwargs:
                            raise TypeError(f"{name}() got multiple values for argument '{canonical}'")
                        kwargs[canonical] = kwargs.pop(alias)
                out = kwargs.pop("out", None) if takes_out else None
                if out is not None:
                    return write_out(name, fn(*args, **kwargs), out, _tensors_in(args, kwargs))
            return fn(*args, **kwargs)
        except AttributeError:   # an input that is no tensor (a list, an array, a float): torch's parser's words
            value = args[0] if args else kwargs.get("input")
            if takes_input and (args or "input" in kwargs) and not is_tensor(value):
                raise argument_error(name, "input", 1, "Tensor", type_name(value)) from None
            raise
    call.plain, call.aliases, call.takes_out = fn, tuple(aliases), takes_out
    return call


def plain(fn):
    """The function as written, under the calling conventions `wrap` added (if any)."""
    return getattr(fn, "plain", fn)


def numpy_names(obj):
    """Decorator: a function (no out=) or every public method of a class (Tensor: x.cumsum(axis=0))
    takes torch's NumPy-style names."""
    if not isinstance(obj, type):
        return wrap(obj, obj.__name__, False)
    for name, fn in list(vars(obj).items()):
        if not name.startswith("_") and inspect.isfunction(fn):
            setattr(obj, name, wrap(fn, name, False))
    return obj
