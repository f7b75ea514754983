"""Trace -> Graphviz DOT: nodes, edges, scope clusters and placeholders for hidden nodes.

Every node and edge carries `id` (the trace id: n0.., e0..; g0.. for placeholders)
and a `class` naming its kind; Graphviz copies both onto the SVG `<g>` elements,
which is what lets the player restyle one layout frame by frame.
Edges run from input to consumer, as in torchviz, so with rankdir="TB" the
leaves sit on top and the output at the bottom.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from functools import lru_cache

import graphviz
from graphviz import quoting

from ..forward_trace import ForwardTrace
from ..tracing import Trace
from . import labels, size
from .collapse import View, plan
from .escape import dot_text
from .formula import Graph
from .theme import Theme, resolve_theme

RANKDIRS = ("TB", "LR", "BT", "RL")
# A node feeding more than FANOUT_LIMIT ops (a weight shared by every step of an RNN) draws
# FANOUT_KEEP real edges and starts the others from small dashed references beside each
# consumer: edges spanning the whole graph make Graphviz's crossing minimisation take
# seconds even for a hundred nodes (and minutes for a few hundred).
FANOUT_LIMIT = 8
_ORDER_NAMES = {0: "forward", 1: "built by backward (1st order)", 2: "2nd order", 3: "3rd order"}
FANOUT_KEEP = 2


@dataclass
class DrawOptions:
    show_values: bool = True
    show_grads: bool = True
    show_saved: bool = False      # used when building the Trace; a given Trace already decided
    show_attrs: bool = False
    show_shapes: bool = True
    rankdir: str = "TB"
    theme: object = None
    max_nodes: int | str | None = "auto"
    collapse: object = None
    max_attr_chars: int = 50

    def __post_init__(self):
        if self.rankdir not in RANKDIRS:
            raise ValueError(f"rankdir must be one of {RANKDIRS}, not {self.rankdir!r}")
        if self.collapse not in (None, False, "scopes") and not isinstance(self.collapse, (str, list, tuple, set)):
            raise ValueError(f"collapse must be None, False, 'scopes' or scope names, not {self.collapse!r}")
        if self.max_nodes not in (None, "auto") and (isinstance(self.max_nodes, (bool, str)) or
                                                      not isinstance(self.max_nodes, int)):
            raise ValueError(f"max_nodes must be 'auto', a number of nodes or None, not {self.max_nodes!r}")


def options(**kwargs) -> DrawOptions:
    """DrawOptions from keyword arguments, naming any unknown one."""
    known = DrawOptions.__dataclass_fields__
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        raise TypeError(f"unknown drawing option(s) {', '.join(unknown)}; expected some of {', '.join(known)}")
    return DrawOptions(**kwargs)


# -- facts gathered from the whole trace ------------------------------------------------------
def summed_axes(trace: Trace) -> dict:
    """edge id -> axes summed to undo broadcasting.

    From the recorded steps when the trace holds a backward run (exact: the engine's own
    sum_to); without steps, what the Recorder inferred for each edge from the op's record
    (which inputs broadcast) and the engine's broadcast rule."""
    if trace.steps:
        return {edge_id: tuple(summed) for step in trace.steps for edge_id, _, summed in step.flows if summed}
    return {e.id: tuple(e.axes) for e in trace.edges if e.axes}


def label_context(trace: Trace, opts: DrawOptions, theme: Theme) -> labels.LabelContext:
    index = {n.id: n for n in trace.nodes}
    per_output: dict = {}   # consumers of each output: a split's outputs each have their own ḡ, not a sum
    leaf_of: dict = {}
    for e in trace.edges:
        if e.slot >= 0:
            key = (e.src, getattr(e, "output_nr", 0))
            per_output[key] = per_output.get(key, 0) + 1
        if index[e.dst].kind == "accumulate" and index[e.src].kind == "leaf" and index[e.src].name:
            leaf_of[e.dst] = index[e.src].name
    uses: dict = {}
    for (src, _), count in per_output.items():
        uses[src] = max(uses.get(src, 0), count)
    received: dict = {}
    for step in trace.steps:
        node = index.get(step.node)
        if node is not None and node.kind == "op" and len(step.grad_in) == 1 and step.grad_in[0] is not None:
            received[step.node] = step.grad_in[0]
    for root in trace.roots:   # an output's ḡ is the seed its grad_fn received, if it is its only use
        for e in trace.edges:
            if e.dst == root and uses.get(e.src) == 1 and e.src in received:
                received[root] = received[e.src]
    outputs_used: dict = {}
    for e in trace.edges:
        outputs_used.setdefault(e.src, set()).add(getattr(e, "output_nr", 0))
    multi = {src for src, nrs in outputs_used.items() if len(nrs) > 1 or nrs != {0}}
    forward = isinstance(trace, ForwardTrace)   # forward mode computes no .grad: no grad column to show
    return labels.LabelContext(theme, show_values=opts.show_values, show_grads=opts.show_grads and not forward,
                               show_shapes=opts.show_shapes, show_attrs=opts.show_attrs,
                               max_attr_chars=opts.max_attr_chars, received=received, uses=uses,
                               leaf_of=leaf_of, multi_output=multi, graph=Graph(trace),
                               forward=forward)


def plan_for(trace: Trace, opts: DrawOptions, ctx: labels.LabelContext | None = None) -> View:
    """What to draw of `trace` with these options (collapse.plan, with the label sizes its
    default folding estimates the drawing from; ctx: the label context, when the caller has it)."""
    sizes = None
    if opts.max_nodes == "auto" and opts.collapse is None:
        sizes = size.Sizes(trace, ctx or label_context(trace, opts, resolve_theme(opts.theme)))
    return plan(trace, opts.max_nodes, opts.collapse, sizes=sizes, rankdir=opts.rankdir,
                labelled=opts.show_shapes)


# -- the digraph ------------------------------------------------------------------------------
def _node_style(node, theme: Theme) -> dict:
    if node.kind in ("op", "accumulate"):
        return {"fillcolor": theme.order_fill(node.order), "style": "filled"}
    fill = {"leaf": theme.leaf_fill, "output": theme.output_fill, "saved": theme.saved_fill}[node.kind]
    return {"fillcolor": fill, "style": "filled"}


def _group_label(group, index: dict) -> str:
    return dot_text("\n".join(group.label_lines(index)))


def _cluster_tree(entries: list) -> dict:
    """{scope name: subtree}, where a subtree holds its entries under the key None."""
    tree: dict = {None: []}
    for scope, entry in entries:
        node = tree
        for name in scope:
            node = node.setdefault(name, {None: []})
        node[None].append(entry)
    return tree


def to_digraph(trace: Trace, opts: DrawOptions | None = None, view: View | None = None,
               ctx: labels.LabelContext | None = None) -> graphviz.Digraph:
    """The graphviz.Digraph of a trace, drawn with `opts` (or the defaults)."""
    opts = opts or DrawOptions()
    theme = resolve_theme(opts.theme)
    ctx = ctx or label_context(trace, opts, theme)
    view = view or plan_for(trace, opts, ctx)
    axes = summed_axes(trace)
    index = {n.id: n for n in trace.nodes}
    edges_by_id = {e.id: e for e in trace.edges}

    g = graphviz.Digraph("gradviz", format="svg")
    g.attr("graph", rankdir=opts.rankdir, bgcolor=theme.bgcolor, fontname=theme.fontname,
           fontsize=theme.fontsize, fontcolor=theme.fontcolor, nodesep="0.25", ranksep="0.3")
    g.attr("node", shape="box", style="filled", fontname=theme.fontname, fontsize=theme.fontsize,
           fontcolor=theme.fontcolor, color=theme.border_color, margin="0.08,0.04")
    g.attr("edge", color=theme.edge_color, fontname=theme.fontname, fontsize="10", fontcolor=theme.fontcolor,
           arrowsize="0.7")

    entries = []
    for node_id in view.nodes:
        node = index[node_id]
        scope = tuple(node.scope) if node.kind == "op" else ()
        entries.append((scope, ("node", node)))
    for group in view.groups:
        entries.append((tuple(group.scope), ("group", group)))

    def emit(graph, entry) -> None:
        what, item = entry
        if what == "node":
            _node(graph, item.id, label=labels.node_label(item, ctx, opts.rankdir), id=item.id, shape="record",
                  _attributes={"class": item.kind + (f" o{min(item.order, 4)}" if item.order > 0 else "")},
                       **_node_style(item, theme))
        else:
            style = "filled,rounded" if item.kind == "scope" else "filled,dashed"
            fill = theme.scope_fill if item.kind == "scope" else theme.hidden_fill
            _node(graph, item.id, label=_group_label(item, index), id=item.id, style=style, fillcolor=fill,
                  _attributes={"class": f"group {item.kind}"})

    clusters = iter(range(10 ** 9))

    def emit_tree(graph, tree: dict) -> None:
        for entry in tree[None]:
            emit(graph, entry)
        for name, sub in tree.items():
            if name is None:
                continue
            k = next(clusters)
            with graph.subgraph(name=f"cluster_{k}") as c:
                c.attr(label=dot_text(name), id=f"scope{k}", style="rounded,filled",
                       color=theme.cluster_color, fillcolor=theme.cluster_fill, fontcolor=theme.fontcolor,
                       labeljust="l", _attributes={"class": "scope"})
                emit_tree(c, sub)

    emit_tree(g, _cluster_tree(entries))

    stubs = _fanout_stubs(view, index)
    for src, edge_ids in stubs.items():
        node = index[src]
        title = ctx.leaf_of.get(src) or node.name or node.kind
        for edge_id in edge_ids:
            _node(g, f"ref-{edge_id}", label=dot_text(f"⇢ {title}"), id=f"ref-{edge_id}",
                  style="filled,dashed", fillcolor=_node_style(node, theme)["fillcolor"], fontsize="10",
                  margin="0.04,0.02", height="0.2", _attributes={"class": "ref"})
    stubbed = {edge_id: src for src, ids in stubs.items() for edge_id in ids}

    for ve in view.edges:
        attrs = {"id": ve.id}
        src_kind = index[ve.src].kind if ve.src in index else "group"
        if src_kind == "saved":
            attrs.update(style="dashed", dir="none", _attributes={"class": "saved"})
        elif len(ve.members) > 1:
            attrs.update(label=dot_text(f"×{len(ve.members):,}"), style="bold",
                         _attributes={"class": "merged"})
        else:
            edge = edges_by_id[ve.id]
            label = labels.edge_label(edge, axes.get(edge.id), ctx)
            if label:
                attrs["label"] = label
            if axes.get(edge.id):
                attrs["fontcolor"] = theme.sum_color
                attrs["_attributes"] = {"class": "summed"}
        _edge(g, f"ref-{ve.id}" if ve.id in stubbed else ve.src, ve.dst, **attrs)

    notes = list(view.notes)
    for src, edge_ids in stubs.items():
        title = ctx.leaf_of.get(src) or index[src].name
        notes.append(f"{src} ({title}) feeds {len(edge_ids) + FANOUT_KEEP} ops: {len(edge_ids)} of its edges "
                     "start from dashed references (⇢)")
    if any(n.order > 0 for n in trace.nodes):
        orders = sorted({n.order for n in trace.nodes if n.kind in ("op", "accumulate")})
        # one order a line: on one line the key is wider than a small graph, and cut in the player
        notes.append("fill by derivative order:" + "".join(
            f"\n  {_ORDER_NAMES.get(o, f'order {o}')}: {theme.order_fill(o)}" for o in orders))
    if notes:
        g.attr("graph", label=dot_text(wrap_notes(notes) + "\n", newline="\\l"),
               labelloc="b", labeljust="l", fontsize="10")
    return g


# The footnote's lines are wrapped at words: the player frames its nodes at a readable size, and a
# note one long line ("folded to fit about 3 screens of 1280x720: max_nodes=None ...", 90 characters,
# about 850 px where the player follows) is wider than its stage at 1024 px and cannot slide in whole.
NOTE_WIDTH = 48


def wrap_notes(notes: list) -> str:
    """The notes as the footnote's text: each of its lines wrapped at NOTE_WIDTH characters, the rest of
    a wrapped line indented under its start."""
    out = []
    for line in "\n".join(notes).split("\n"):
        indent = " " * (len(line) - len(line.lstrip(" ")))
        out += textwrap.wrap(line, NOTE_WIDTH, subsequent_indent=indent + "  ", break_long_words=False,
                             break_on_hyphens=False) or [line]
    return "\n".join(out)


# -- node and edge statements, written as graphviz.Digraph's node() and edge() write them -------------
# (a diagram has thousands of attributes; each of those calls passes them through three argument-checking
# wrappers and quotes each again, a third of its DOT text's time)
_quote = lru_cache(maxsize=4096, typed=True)(quoting.quote)   # typed: a NoHtml label is quoted as a string
_quote_edge = lru_cache(maxsize=4096)(quoting.quote_edge)


def _statement(left: str, label=None, _attributes=None, **attrs) -> str:
    """The line `left [label=... attrs ... _attributes ...]`: graphviz's attr_list, keys sorted as it sorts a dict's."""
    parts = [f"label={_quote(label)}"] if label is not None else []
    parts += [f"{_quote(k)}={_quote(v)}" for k, v in sorted(attrs.items()) if v is not None]
    if _attributes:
        parts += [f"{_quote(k)}={_quote(v)}" for k, v in sorted(_attributes.items()) if v is not None]
    return f"\t{left} [{' '.join(parts)}]\n" if parts else f"\t{left}\n"


def _node(graph: graphviz.Digraph, name: str, **attrs) -> None:
    graph.body.append(_statement(_quote(name), **attrs))


def _edge(graph: graphviz.Digraph, tail: str, head: str, **attrs) -> None:
    graph.body.append(_statement(f"{_quote_edge(tail)} -> {_quote_edge(head)}", **attrs))


def _fanout_stubs(view: View, index: dict) -> dict:
    """src node id -> ids of the edges that start from a reference instead of from the node."""
    out: dict = {}
    for ve in view.edges:
        if ve.src in index and index[ve.src].kind != "saved" and len(ve.members) == 1:
            out.setdefault(ve.src, []).append(ve.id)
    return {src: ids[FANOUT_KEEP:] for src, ids in out.items() if len(ids) > FANOUT_LIMIT}


def to_dot(trace: Trace, **draw_options) -> str:
    """The DOT source of a trace's diagram (see `draw` for the options)."""
    return to_digraph(trace, options(**draw_options)).source
