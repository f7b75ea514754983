"""Names for a picture: the learner's own variable names, read from the caller's namespace,
and the small text rules a recording's one-symbol-per-tensor naming is built from.

When `draw`, `animate` or `step` get no `names=`, the tensors are named after the
variables that hold them in the code that called gradviz, where that is unambiguous:
a tensor held by exactly one public variable (IPython's `_`, `_12`, `Out` and any
`_private` name are ignored). Locals shadow globals, as in Python.
"""
from __future__ import annotations

import ast
import os
import re
import sys
import unicodedata
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
    return {} if frame is None else names_in(frame, is_tensor)


def caller_namespace(frame=None) -> dict:
    """The variables of the calling code (the first frame outside gradviz): its globals, shadowed
    by its locals, as Python resolves a name there; {} when no such frame is found."""
    frame = _outside_package(frame if frame is not None else sys._getframe(1))
    return {} if frame is None else _namespace(frame)


def _namespace(frame) -> dict:
    namespace = dict(frame.f_globals)
    namespace.update(frame.f_locals)
    return namespace


def names_in(frame, is_tensor: Callable[[object], bool]) -> dict:
    """{name: tensor} for every tensor this frame's code holds under exactly one public name."""
    return tensors_named(_namespace(frame), is_tensor)


def tensors_named(namespace: dict, is_tensor: Callable[[object], bool]) -> dict:
    """{name: tensor} for every tensor `namespace` holds under exactly one public name."""
    holders: dict = {}
    for name, value in namespace.items():
        # a tensor the learner named itself (x.name = "...") keeps that name
        if _public(name) and is_tensor(value) and getattr(value, "name", None) is None:
            holders.setdefault(id(value), []).append((name, value))
    return {found[0][0]: found[0][1] for found in holders.values() if len(found) == 1}


def parameter_name(name: str, holder: str = "") -> str:
    """A name from named_parameters() as a formula can show it. "2.bias" (an nn.Sequential's) would
    read as 2 × bias in `2.bias + x W`: it is written after the variable that holds its module,
    model.2.bias (as torch's state_dict names it inside a module called model), or, with no such
    variable, as the module is indexed, [2].bias. A name that starts with a letter stays."""
    if not name[:1].isdigit():
        return name
    if holder:
        return f"{holder}.{name}"
    parts = name.split(".")
    k = next((i for i, p in enumerate(parts) if not p.isdigit()), len(parts))
    return "".join(f"[{p}]" for p in parts[:k]) + "".join(f".{p}" for p in parts[k:])


def module_parameters(module, namespace: dict | None) -> dict:
    """{name: parameter} of `module`, each named as parameter_name writes it, after the public
    variable of `namespace` that holds the module (if one does)."""
    holder = next((k for k, v in (namespace or {}).items() if v is module and _public(k)), "")
    return {parameter_name(k, holder): p for k, p in module.named_parameters()}


def caller_modules(namespace: dict | None, is_module: Callable[[object], bool]) -> list:
    """The modules `namespace`'s public variables hold, those with more parameters (a model before
    its layers) first."""
    found = {id(v): v for k, v in (namespace or {}).items() if _public(k) and is_module(v)}
    return sorted(found.values(), key=lambda m: -sum(1 for _ in m.named_parameters()))


def is_tensor(value) -> bool:
    """A gradviz Tensor or a real torch tensor (checked without importing torch)."""
    kind = type(value)
    return kind.__name__ in ("Tensor", "Parameter") and kind.__module__.split(".")[0] in ("gradviz", "torch")


def with_caller_names(names, frame=None):
    """`names` as given, or {variable name: tensor} from the calling code when none were given."""
    if names is not None:
        return names
    return caller_names(is_tensor, frame if frame is not None else sys._getframe(1))


_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

# Letters for the tensors nobody named (t₁, t₂, ...): the first one the learner's code does not use.
FREE_LETTERS = ("t", "u", "v", "w", "p", "q", "r", "s", "h", "g")


def subscript(k: int) -> str:
    return str(k).translate(_SUBSCRIPT)


def dotted(name: str) -> str:
    """The tangent of a tensor named `name`, as text (ẋ, ḣ, ṫ₁); ṫ for a tensor with no name."""
    return unicodedata.normalize("NFC", name[:1] + "\u0307" + name[1:]) if name else "ṫ"


def assignment(text: str) -> tuple | None:
    """(name, reads itself) for a source line that is one assignment to one plain name
    (`c = z1.T @ z2 / N` -> ("c", False), `y = y * 2` and `y *= 2` -> ("y", True)), or that
    unpacks one call into plain names (`q, k, v = x.split(d, 2)` -> (("q", "k", "v"), False)); None
    for any other line (several targets, a tuple of values, a statement cut over lines, no assignment)."""
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        target, value, reads = stmt.targets[0].id, stmt.value, False
    elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List))
          and all(isinstance(t, ast.Name) for t in stmt.targets[0].elts) and isinstance(stmt.value, ast.Call)):
        # `out, _ = rnn(x)`: a throwaway name names nothing
        target, value, reads = tuple("" if t.id == "_" else t.id for t in stmt.targets[0].elts), stmt.value, False
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        target, value, reads = stmt.target.id, stmt.value, True
    else:
        return None
    if any(isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
           for n in ast.walk(value)):
        return None   # the tensors made inside are not the value assigned
    reads = reads or any(isinstance(n, ast.Name) and n.id in (target if isinstance(target, tuple) else (target,))
                         for n in ast.walk(value))
    return target, reads


_ASSIGNED = re.compile(r"\s*([A-Za-z_][\w\s,]*?)\s*(?:\+|-|\*|/|@)?=(?!=)")


def assigned_names(lines) -> set:
    """The names these lines of code assign (`b = ...`, `a, b = ...`, `y *= 2`)."""
    names = set()
    for line in lines:
        m = _ASSIGNED.match(line)
        if m:
            names.update(n.strip() for n in m.group(1).split(",") if n.strip().isidentifier())
    return names
