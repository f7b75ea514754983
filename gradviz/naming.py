"""Names for a picture: the learner's own variable names, read from the caller's namespace.

When `draw`, `animate` or `step` get no `names=`, the tensors are named after the
variables that hold them in the code that called gradviz, where that is unambiguous:
a tensor held by exactly one public variable (IPython's `_`, `_12`, `Out` and any
`_private` name are ignored). Locals shadow globals, as in Python.
"""
from __future__ import annotations

import os
import sys
from typing import Callable

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _outside_package(frame):
    """The first frame up the stack whose code is not gradviz's own."""
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE_DIR + os.sep):
            return frame
        frame = frame.f_back
    return None


def _public(name: str) -> bool:
    return not name.startswith("_") and name not in ("In", "Out")


def caller_names(is_tensor: Callable[[object], bool], frame=None) -> dict:
    """{name: tensor} for every tensor the calling code holds under exactly one public name."""
    frame = _outside_package(frame if frame is not None else sys._getframe(1))
    if frame is None:
        return {}
    namespace = dict(frame.f_globals)
    namespace.update(frame.f_locals)
    holders: dict = {}
    for name, value in namespace.items():
        # a tensor the learner named itself (x.name = "...") keeps that name
        if _public(name) and is_tensor(value) and getattr(value, "name", None) is None:
            holders.setdefault(id(value), []).append((name, value))
    return {found[0][0]: found[0][1] for found in holders.values() if len(found) == 1}


def is_tensor(value) -> bool:
    """A gradviz Tensor or a real torch tensor (checked without importing torch)."""
    kind = type(value)
    return kind.__name__ in ("Tensor", "Parameter") and kind.__module__.split(".")[0] in ("gradviz", "torch")


def with_caller_names(names, frame=None):
    """`names` as given, or {variable name: tensor} from the calling code when none were given."""
    if names is not None:
        return names
    return caller_names(is_tensor, frame if frame is not None else sys._getframe(1))
