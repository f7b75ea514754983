"""The text on nodes and edges: names, formulas, shapes, values and gradients.

Node labels follow micrograd's "data | grad" layout for small tensors (up to
LABEL_VALUES elements) and a min/mean/max summary for larger ones. A leaf
whose `.grad` is still None says "grad: not computed yet" rather than zeros.
Every user-supplied string goes through escape.record_text or escape.dot_text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import graphviz

from .. import formatting
from ..naming import dotted
from ..previews import Preview
from ..records import EdgeRecord, NodeRecord
from .escape import dot_text, lines, record_text
from .formula import Graph
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
    multi_output: set = field(default_factory=set)  # node ids whose edges leave from different outputs
    graph: Graph | None = None                      # the trace's look-ups, for formulas in the learner's names
    forward: bool = False                           # a forward-mode trace: tangents flow, nothing is summed


# -- numbers ---------------------------------------------------------------------------------
LABEL_VALUES = 16                  # a node label prints up to this many values, a summary beyond
format_shape = formatting.shape    # the one shape notation: (3, 4)
format_number = formatting.number  # the one number format: 2.0, 0.3333


def values_text(preview: Preview) -> str:
    """The values of a small tensor as text (may span lines), or its min/mean/max summary."""
    if preview.values is not None and preview.values.size <= LABEL_VALUES:
        return formatting.wrapped(preview.values)
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


# -- tooltips: the line of the learner's code that made a node ----------------------------------
def fan_out_text(node: NodeRecord, uses: int) -> str:
    """Forward mode's fan-out: each consumer gets a copy of the tangent (backward sums, forward copies)."""
    tangents = ", ".join(dotted(n) for n in node.out_names if n) or "ṫ"
    return f"{tangents} copied to {uses} ops"


def file_name(file: str) -> str:
    """A short name for a source file: "notebook cell" for a Jupyter cell, else the path's last part."""
    if file.startswith("<ipython-input") or "ipykernel_" in file:
        return "notebook cell"
    if file.startswith("<"):
        return file
    return file.replace("\\", "/").rsplit("/", 1)[-1]


def tooltip(node: NodeRecord) -> str:
    """What hovering a node says: its name (an op's with the symbol of what it made), and with source
    tracking on the file:line and the code that created it ("MulBackward0 (y) · train.py:12: y = x * 2")."""
    title = node.name or node.kind
    made = ", ".join(n for n in node.out_names if n) if node.kind == "op" else ""
    if made:
        title += f" ({made})"
    if node.source is None:
        return title
    file, line, text = node.source
    return f"{title} · {file_name(str(file))}:{int(line)}: {str(text).strip()}"


# -- attributes (torchviz's show_attrs) -------------------------------------------------------
def node_attrs(node: NodeRecord) -> dict:
    """A grad_fn's non-tensor arguments and saved tensors, as torchviz lists its _saved_* fields
    (recorded into the Trace when the node was created)."""
    return dict(node.attrs)


def truncate(text: str, limit: int) -> str:
    limit = max(limit, 3)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- record labels ----------------------------------------------------------------------------
def _block(title: str, text: str) -> str:
    """One "data" or "grad" field: a scalar on one line, an array left-aligned under its title."""
    if "\n" not in text and len(text) <= 16:
        return record_text(f"{title} {text}")
    return lines(record_text(title), *[record_text(line) for line in text.split("\n")], align="left")


def _data_grad(value: Preview | None, grad: Preview | None, grad_note: str | None, ctx: LabelContext) -> list:
    """micrograd's "data | grad" fields, or whichever of the two there is."""
    fields = []
    if ctx.show_values and value is not None and (value.values is not None or value.stats is not None):
        fields.append(_block("data", values_text(value)))
    if ctx.show_grads:
        if grad is not None:
            fields.append(_block("grad", values_text(grad)))
        elif grad_note:
            fields.append(record_text(grad_note))
    return fields


def constant_lines(node: NodeRecord, ctx: LabelContext) -> list:
    """The tensors an op used that need no gradient (the y of x * y, a target), by the name its formula
    calls them: y = tensor(2.0) with their values when small, else their shape (a Python number is
    in the formula itself, 2x)."""
    out = []
    for slot, preview in enumerate(node.in_values):
        if preview is None:
            continue
        name = node.in_names[slot] if slot < len(node.in_names) and node.in_names[slot] else node.symbol(slot)
        if ctx.show_values and preview.values is not None:
            rows = formatting.wrapped(preview.values, 40).split("\n")
            out.extend([f"{name} = tensor({rows[0]}", *(" " * 8 + row for row in rows[1:])])
            out[-1] += ")"
        elif ctx.show_shapes:
            out.append(f"{name}: tensor {shape_text(preview)}")
    return out


def header_lines(node: NodeRecord, ctx: LabelContext, sizing: bool = False) -> list:
    """The plain text lines above a node's data | grad: name, formula, shape, attributes, notes.
    sizing: only the lines' lengths matter (the formula comes back as that many x's, untypeset)."""
    out = []
    kind = node.kind
    if kind in ("op", "accumulate"):
        out.append(node.name)
        formula = [node.formula] if node.formula else []
        if kind == "op" and ctx.graph is not None:
            # the step panel's formula with this node's own names and constants (b = a + a, y = 2x),
            # wrapped between its terms when long
            formula = ctx.graph.formula(node).headline_lines(sizing)
        if kind == "accumulate" and ctx.leaf_of.get(node.id):
            formula = [line.replace("x.grad", f"{ctx.leaf_of[node.id]}.grad", 1) for line in formula]
        out.extend(formula)
        if kind == "op":
            out.extend(constant_lines(node, ctx))
        if ctx.show_shapes and kind == "op" and node.value is not None:
            out.append(shape_text(node.value))
        if ctx.show_attrs:
            out.extend(f"{key}: {truncate(val, ctx.max_attr_chars)}" for key, val in node_attrs(node).items())
        if node.order > 0:
            out.append(f"derivative order {node.order}")
        uses = ctx.uses.get(node.id, 0)
        if uses > 1 and ctx.forward:
            out.append(fan_out_text(node, uses))
        elif uses > 1:
            target = f"{ctx.leaf_of[node.id]}.grad" if kind == "accumulate" and ctx.leaf_of.get(node.id) else "ḡ"
            out.append(fan_in_formula(uses, target))
        return out
    title = node.name or {"output": "output", "saved": "saved"}.get(kind, "")
    if title:
        out.append(title)
    if ctx.show_shapes and node.value is not None:
        out.append(shape_text(node.value))
    return out


def node_label(node: NodeRecord, ctx: LabelContext, rankdir: str = "TB") -> str:
    """The record label of one trace node: the header above, then data | grad side by side."""
    header = lines(*[record_text(line) for line in header_lines(node, ctx)])
    grad, note = None, None
    if node.kind == "op":
        grad = ctx.received.get(node.id)
    elif node.kind == "leaf":
        grad, note = node.grad, NOT_COMPUTED
    elif node.kind == "output":
        grad = node.grad if node.grad is not None else ctx.received.get(node.id)   # the seed ḡ of a run
    fields = _data_grad(node.value if node.kind != "accumulate" else None, grad, note, ctx)
    parts = [header] if header else []
    if len(fields) == 2:
        parts.append("{" + "|".join(fields) + "}")
    elif fields:
        parts.append(fields[0])
    if not parts:
        parts = ["\\ "]   # a record needs one field, and an empty one collapses
    body = "|".join(parts)   # no spaces around bars: the record parser would keep them as text
    # fields stack top to bottom inside braces when ranks run top to bottom, and the other
    # way round for LR; the data | grad pair is nested once more, so it always sits side by side
    return graphviz.nohtml("{" + body + "}" if rankdir in ("TB", "BT") else body)


def edge_label(edge: EdgeRecord, axes, ctx: LabelContext) -> str | None:
    """The shape that flows along an edge, and the Σ mark where broadcasting was undone; out of a
    node of several outputs, which one flows: its symbol (the R of (Q, R) = qr(A)), else its number."""
    parts = []
    if edge.src in ctx.multi_output:
        nr = getattr(edge, "output_nr", 0)
        symbol = ctx.graph.symbol(edge.src, nr) if ctx.graph is not None else ""
        parts.append(symbol or f"output {nr}")
    if ctx.show_shapes and edge.shape is not None and edge.slot >= 0:
        parts.append(format_shape(edge.shape))
    if axes:
        parts.append(sum_mark(axes))
    if not parts:
        return None
    return dot_text("\n".join(parts))
