"""`@public`: how a hand-written public function declares its exposure (the records declare theirs
with `Op(..., expose=Exposure(...))`); gradviz.functions.declared reads both."""
from __future__ import annotations

from typing import Callable

from ..ops.op import Exposure


def public(*names, method: bool | tuple = False, out: bool | tuple = False, function: bool = True):
    """Mark a hand-written public function: it is exported as gradviz.NAME for each of `names` (its
    own name when none are given), bound as Tensor.NAME for those `method` names (True: all) and
    given torch's `out=` for those `out` names. `@public` alone exports it under its own name.
    function=False: a Tensor method only (torch has no torch.NAME), named by `method`."""
    if len(names) == 1 and callable(names[0]):
        return public()(names[0])

    def mark(fn: Callable) -> Callable:
        fn.__exposure__ = (Exposure(*(names or (fn.__name__,)), method=method, out=out) if function
                           else Exposure(method=method))
        return fn
    return mark
