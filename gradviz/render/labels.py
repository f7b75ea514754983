"""The text on nodes and edges: names, formulas, shapes, values and gradients.

Node labels follow micrograd's "data | grad" layout for small tensors (up to
tracing.PREVIEW_MAX elements) and a min/mean/max summary for larger ones. A leaf
whose `.grad` is still None says "grad: not computed yet" rather than zeros.
Every user-supplied string goes through escape.html_text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..tracing import Preview, TraceEdge, TraceNode
from .escape import html_label, html_text
from .theme import Theme

NOT_COMPUTED = "grad: not computed yet"
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


@dataclass
class LabelContext:
    """What a label needs beyond its own node: options and facts gathered from the whole trace."""
    theme: Theme
    show_values: bool = True
    show_grads: bool = True
    show_shapes: bool = True
    show_attrs: bool = False
    max_attr_chars: int = 50
    received: dict = field(default_factory=dict)    # node id -> Preview of the gradient it received
    uses: dict = field(default_factory=dict)        # node id -> number of consumers (fan-out)
    leaf_of: dict = field(default_factory=dict)     # AccumulateGrad node id -> its leaf's name
    has_steps: bool = False
    multi_output: set = field(default_factory=set)  # node ids whose edges leave from different outputs


# -- numbers ---------------------------------------------------------------------------------
def format_shape(shape) -> str:
    if shape is None:
        return "?"
    dims = [str(int(s)) for s in shape]
    return "(" + dims[0] + ",)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"


def format_number(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{float(x):.4g}"


def values_text(preview: Preview) -> str:
    """The values of a small tensor as text (may span lines), or its min/mean/max summary."""
    if preview.values is not None:
        v = preview.values
        if v.ndim == 0:
            return format_number(v.item())
        if v.dtype.kind in "fc":
            return np.array2string(v, precision=4, separator=", ", max_line_width=48, suppress_small=True,
                                   floatmode="maxprec")
        return np.array2string(v, separator=", ", max_line_width=48)
    if preview.stats is not None:
        lo, mean, hi = preview.stats
        return f"min {lo:.3g}\nmean {mean:.3g}\nmax {hi:.3g}"
    return ""


def shape_text(preview: Preview | None) -> str:
    if preview is None:
        return ""
    text = f"{format_shape(preview.shape)} {preview.dtype}"
    if preview.device and preview.device != "cpu":
        text += f" {preview.device}"
    return text


def sum_mark(axes) -> str:
    """The note on an edge whose gradient was summed to undo broadcasting."""
    axes = tuple(int(a) for a in axes)
    if not axes:
        return ""
    if len(axes) == 1:
        return f"Σ over axis {axes[0]}"
    return "Σ over axes " + ", ".join(str(a) for a in axes)


def fan_in_formula(uses: int, target: str = "ḡ") -> str:
    """How the gradients of a value used `uses` times add up (reverse mode sums over uses)."""
    if uses <= 4:
        return f"{target} = " + " + ".join(f"ḡ{str(i + 1).translate(_SUBSCRIPTS)}" for i in range(uses))
    return f"{target} = sum of {uses} gradients"


# -- attributes (torchviz's show_attrs) -------------------------------------------------------
def node_attrs(node: TraceNode) -> dict:
    """A grad_fn's non-tensor arguments and saved tensors, as torchviz lists its _saved_* fields."""
    ref = node.ref
    if ref is None:
        return {}
    op = getattr(ref, "op", None)
    attrs: dict = {}
    if op is not None and hasattr(op, "param_names"):
        for name, value in zip(op.param_names, getattr(ref, "params", ()) or ()):
            attrs[name] = _attr_value(value)
        for name in op.saves:
            attrs[name] = "[saved tensor]"
        return attrs
    for name in dir(ref):   # a real torch grad_fn (from the torch bridge)
        if not name.startswith("_saved_"):
            continue
        try:
            value = getattr(ref, name)
        except Exception:   # freed after backward: the name is still worth showing
            value = "[freed]"
        attrs[name[len("_saved_"):]] = _attr_value(value)
    return attrs


def _attr_value(value) -> str:
    if hasattr(value, "shape") and hasattr(value, "dtype") and getattr(value, "ndim", 0) > 0:
        kind = "saved tensor" if type(value).__name__ == "Tensor" else "array"
        return f"[{kind} {format_shape(value.shape)}]"
    if isinstance(value, tuple) and any(type(v).__name__ == "Tensor" for v in value):
        return "[saved tensors]"
    return str(value)


def truncate(text: str, limit: int) -> str:
    limit = max(limit, 3)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- HTML-like labels -------------------------------------------------------------------------
def _row(content: str, align: str = "CENTER") -> str:
    return f'<TR><TD COLSPAN="2" ALIGN="{align}" BALIGN="LEFT">{content}</TD></TR>'


def _muted(text: str, ctx: LabelContext) -> str:
    return f'<FONT COLOR="{ctx.theme.muted_color}">{html_text(text)}</FONT>'


def _table(rows: list) -> str:
    return html_label('<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">' + "".join(rows)
                      + "</TABLE>")


def _data_grad_row(value: Preview | None, grad: Preview | None, grad_note: str | None,
                   ctx: LabelContext) -> str | None:
    """micrograd's "data | grad" pair, or whichever half there is."""
    cells = []
    if ctx.show_values and value is not None and (value.values is not None or value.stats is not None):
        cells.append("data " + html_text(values_text(value)) if value.values is not None and value.values.ndim == 0
                     else "data<BR/>" + html_text(values_text(value)))
    if ctx.show_grads:
        if grad is not None:
            text = values_text(grad)
            cells.append(("grad " if grad.values is not None and grad.values.ndim == 0 else "grad<BR/>")
                         + html_text(text))
        elif grad_note:
            cells.append(_muted(grad_note, ctx))
    if not cells:
        return None
    if len(cells) == 1:
        return _row(cells[0], "LEFT")
    return (f'<TR><TD ALIGN="LEFT" BALIGN="LEFT" VALIGN="TOP">{cells[0]}</TD>'
            f'<TD ALIGN="LEFT" BALIGN="LEFT" VALIGN="TOP" SIDES="L" BORDER="1">{cells[1]}</TD></TR>')


def node_label(node: TraceNode, ctx: LabelContext) -> str:
    """The HTML-like label of one trace node."""
    rows = []
    kind = node.kind
    if kind in ("op", "accumulate"):
        rows.append(_row(f"<B>{html_text(node.name)}</B>"))
        formula = node.formula
        if kind == "accumulate" and ctx.leaf_of.get(node.id):
            formula = formula.replace("x.grad", f"{ctx.leaf_of[node.id]}.grad", 1)
        if formula:
            rows.append(_row(html_text(formula)))
        if ctx.show_shapes and kind == "op" and node.value is not None:
            rows.append(_row(_muted(shape_text(node.value), ctx)))
        if ctx.show_attrs:
            for key, val in node_attrs(node).items():
                rows.append(_row(html_text(f"{key}: {truncate(val, ctx.max_attr_chars)}"), "LEFT"))
        if node.order > 0:
            rows.append(_row(_muted(f"derivative order {node.order}", ctx)))
        uses = ctx.uses.get(node.id, 0)
        if uses > 1:
            target = f"{ctx.leaf_of[node.id]}.grad" if kind == "accumulate" and ctx.leaf_of.get(node.id) else "ḡ"
            rows.append(_row(f'<FONT COLOR="{ctx.theme.sum_color}">{html_text(fan_in_formula(uses, target))}'
                             "</FONT>"))
        if kind == "op":
            data_grad = _data_grad_row(node.value, ctx.received.get(node.id), None, ctx)
            if data_grad:
                rows.append(data_grad)
        return _table(rows)
    title = node.name or {"leaf": "", "output": "output", "saved": "saved"}.get(kind, "")
    if title:
        rows.append(_row(f"<B>{html_text(title)}</B>"))
    if ctx.show_shapes and node.value is not None:
        rows.append(_row(_muted(shape_text(node.value), ctx)))
    grad = node.grad
    note = None
    if kind == "leaf":
        note = NOT_COMPUTED
    elif kind == "output" and grad is None:
        grad = ctx.received.get(node.id)   # the seed ḡ, when the trace holds a backward run
    elif kind == "saved":
        grad = None
    data_grad = _data_grad_row(node.value, grad, note, ctx)
    if data_grad:
        rows.append(data_grad)
    if not rows:
        rows.append(_row(" "))
    return _table(rows)


def edge_label(edge: TraceEdge, axes, ctx: LabelContext) -> str | None:
    """The shape that flows along an edge, and the Σ mark where broadcasting was undone."""
    parts = []
    if edge.src in ctx.multi_output:
        parts.append(html_text(f"output {getattr(edge, 'output_nr', 0)}"))
    if ctx.show_shapes and edge.shape is not None and edge.slot >= 0:
        parts.append(html_text(format_shape(edge.shape)))
    if axes:
        parts.append(f'<FONT COLOR="{ctx.theme.sum_color}">{html_text(sum_mark(axes))}</FONT>')
    if not parts:
        return None
    return html_label("<BR/>".join(parts))
