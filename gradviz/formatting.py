"""The one value formatter and the one shape notation every view uses.

Diagram labels, edge labels, the step panel, captions and the GIF all print numbers,
arrays, shapes and Previews through these functions, so `[1.0, 2.0]` and `(3, 4)`
read the same everywhere. A number prints short (4 significant digits), and an
integral float keeps its '.0' as PyTorch prints it.
"""
from __future__ import annotations

import math

import numpy as np


def shape(dims) -> str:
    """(3, 4), (4,), () — Python's tuple notation, which torch.Size prints too."""
    if dims is None:
        return "?"
    dims = [str(int(s)) for s in dims]
    return "(" + dims[0] + ",)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"


def number(v) -> str:
    """2.0, -0.5, 0.3333, 1.2e-05, 3 (ints), True (bools)."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (complex, np.complexfloating)):
        return f"{number(v.real)}{'+' if v.imag >= 0 else '-'}{number(abs(v.imag))}j"
    v = float(v)
    if np.isnan(v) or np.isinf(v):
        return str(v)
    if v == int(v) and abs(v) < 1e6:
        return f"{v:.1f}"
    return f"{v:.4g}"


def array(values) -> str:
    """Nested brackets like a list: [[1.0, 2.0], [3.0, 4.0]]; a 0-d array is its number."""
    a = np.asarray(values)
    if a.ndim == 0:
        return number(a.item() if a.dtype.kind != "b" else bool(a))
    return "[" + ", ".join(array(x) for x in a) + "]"


def wrapped(values, width: int = 48) -> str:
    """array(values) broken into lines of about `width` characters (diagram labels): a matrix
    one row per line, a long vector at its commas."""
    a = np.asarray(values)
    text = array(a)
    if len(text) <= width or a.ndim == 0:
        return text
    if a.ndim > 1:
        rows = [wrapped(r, width - 1) for r in a]
        return "[" + ",\n ".join(r.replace("\n", "\n ") for r in rows) + "]"
    lines, line = [], "["
    for i, v in enumerate(a):
        item = number(v.item() if a.dtype.kind != "b" else bool(v)) + ("," if i < len(a) - 1 else "]")
        if len(line) + len(item) + 1 > width and line != "[":
            lines.append(line)
            line = " " + item
        else:
            line += ("" if line in ("[", " ") else " ") + item
    lines.append(line)
    return "\n".join(lines)


def constant(value) -> str:
    """A constant an op used (a Python number, bool, string or a tuple of them)."""
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(constant(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, str):
        return value
    if hasattr(value, "shape") or isinstance(value, (int, float, bool, complex, np.generic)):
        return array(value)
    return str(value)


def preview(p, limit: int | None = None) -> str:
    """A Preview as text: its values, or its shape and min/mean/max."""
    if p is None:
        return "—"
    if p.values is not None and (limit is None or p.values.size <= limit):
        return array(p.values)
    if p.stats is not None:
        lo, mean, hi = p.stats
        return f"{shape(p.shape)} (min {number(lo)}, mean {number(mean)}, max {number(hi)})"
    return f"{shape(p.shape)} (values not recorded)"


def short(p) -> str:
    """An edge label: values for up to 4 elements, the shape otherwise."""
    if p is None:
        return ""
    if math.prod(p.shape) <= 4 and p.values is not None:   # (a larger lazy preview is not read)
        return array(p.values)
    return shape(p.shape)
