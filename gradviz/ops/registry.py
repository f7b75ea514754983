"""OPS: the one table of op records, read by the torch bridge, the op reference (gradviz.reference,
docs/ops.md) and the coverage tests.

A record is an `Op` bound to a module-level name in one of gradviz.ops' modules; the
table is built by walking those modules once, so adding an op is adding its record (and
one test row: see tests/ops/test_registry.py).
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .op import Op


@lru_cache(maxsize=None)
def ops() -> dict:
    """{"module.NAME": Op} for every record in gradviz.ops, in module then definition order, then
    those of the modules added from outside ({"their.full.name.NAME": Op})."""
    package = importlib.import_module(__package__)
    modules = [(info.name, importlib.import_module(f"{__package__}.{info.name}"))
               for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)]
    table: dict = {}
    seen: set = set()
    for prefix, module in modules + [(m.__name__, m) for m in _added]:
        for name, value in vars(module).items():
            if isinstance(value, Op) and id(value) not in seen and name != "_":   # `_`: a discarded pair member
                seen.add(id(value))
                table[f"{prefix}.{name}"] = value
    return table


_added: list = []   # modules of records outside gradviz.ops (gradviz.declare_ops)


def add(module) -> None:
    """Make the records of `module` (a module outside gradviz.ops) part of the table."""
    if module not in _added:
        _added.append(module)
        ops.cache_clear()


def discard(module) -> None:
    """Take an added module's records out of the table again."""
    if module in _added:
        _added.remove(module)
        ops.cache_clear()


def by_torch_name() -> dict:
    """PyTorch node name -> the first differentiable record with that name (the user-facing op
    comes before the helpers its VJP uses)."""
    table: dict = {}
    for op in ops().values():
        if op.vjp is not None:
            table.setdefault(op.torch_name, op)
    return table
