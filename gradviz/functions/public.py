"""`@public`: how a hand-written public function declares its exposure (the records declare theirs
with `Op(..., expose=Exposure(...))`); gradviz.functions.declared reads both. The function it returns
takes torch's calling conventions (NumPy's names, `out=`), so it is the one gradviz exports."""
from __future__ import annotations

from typing import Callable

from .._calling import wrap
from ..ops.op import Exposure


def public(*names, method: bool | tuple = False, out: bool | tuple = False, function: bool = True):
    """Mark a hand-written public function: it is exported as gradviz.NAME for each of `names` (its
    own name when none are given), bound as Tensor.NAME for those `method` names (True: all) and
    given torch's `out=` for those `out` names. `@public` alone exports it under its own name.
    function=False: a Tensor method only (torch has no torch.NAME), named by `method`.
    The function returned is `fn` taking NumPy's argument names and, where declared, `out=`
    (gradviz._calling), a Tensor method only is `fn` itself."""
    if len(names) == 1 and callable(names[0]):
        return public()(names[0])

    def mark(fn: Callable) -> Callable:
        exposure = fn.__exposure__ = (Exposure(*(names or (fn.__name__,)), method=method, out=out) if function
                                      else Exposure(method=method))
        return exported(fn, exposure)
    return mark


def exported(fn: Callable, exposure: Exposure) -> Callable:
    """`fn` as its exposure exports it: with torch's calling conventions under its first name."""
    return wrap(fn, exposure.names[0], bool(exposure.outs)) if exposure.names else fn
