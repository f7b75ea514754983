"""The public functions the op records declare (`Op(..., expose=Exposure(...))`), made and bound here.

A record whose exposure says how to `make` its function gets one made from it; a record whose
function checks arguments in code has that function written by hand in gradviz.functions.<m> and
marked `@public(...)`, which declares its exposure the same way. Either way the function takes
torch's calling conventions where it is made (public.exported), and is the one gradviz exports.
`exposed()` is the one table of both: gradviz's exports, the Tensor methods, the `out=` forms and
docs/ops.md are read from it.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from .._args import with_method_errors
from .._calling import plain
from ..ops import registry
from ..ops.op import Exposure
from .pointwise import _make_unary
from .public import exported


# how a function is made from a record, by the name an Exposure gives (`make`)
MAKERS: dict[str, Callable] = {
    "unary": lambda op: _make_unary(op),
    "unary_float": lambda op: _make_unary(op, floating=True),
}


def made(op) -> Callable:
    """The function an op's exposure makes from it (made once per record)."""
    fn = _made.get(op)
    if fn is None:
        fn = MAKERS[op.expose.make](op)
        fn.__exposure__ = op.expose
        fn = _made[op] = exported(fn, op.expose)
    return fn


_made: dict = {}   # Op -> its made function


def declarations() -> list:
    """Every function with a declared exposure: the records' made functions, then the hand-written
    ones marked @public in gradviz.functions (by module name)."""
    found = [made(op) for op in registry.ops().values() if op.expose is not None and op.expose.make is not None]
    package = importlib.import_module(__package__)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        for value in vars(importlib.import_module(f"{__package__}.{info.name}")).values():
            if isinstance(getattr(value, "__exposure__", None), Exposure) and callable(value):
                found.append(value)
    return found


def exposed() -> dict:
    """{name: function} for every declared gradviz.NAME, alias names included (the first
    declaration of a name wins)."""
    table: dict = {}
    for fn in declarations():
        for name in fn.__exposure__.names:
            table.setdefault(name, fn)
    return table


def as_method(fn: Callable, name: str | None = None) -> Callable:
    """`fn` as the Tensor method `name` (default its own name): torch counts a method's arguments
    after self in its errors. A method has neither out= nor NumPy's names: it calls the function
    as written."""
    return with_method_errors(plain(fn), name or fn.__name__)


def methods() -> dict:
    """{name: function} of the declared Tensor methods (method-only ones included)."""
    table: dict = {}
    for fn in declarations():
        for name in fn.__exposure__.methods:
            table.setdefault(name, fn)
    return table


def out_names() -> frozenset:
    """The declared functions that take torch's `out=`."""
    return frozenset(name for name, fn in exposed().items() if name in fn.__exposure__.outs)
