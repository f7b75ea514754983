"""A node's formulas in the learner's terms, read from the Trace alone: the output's and inputs'
names (the learner's tensors, or the record's symbols primed where they would clash with one),
the constants the code used, and the record's LaTeX filled with them. The step panel shows
them as MathML and the diagram's labels as Unicode (`Formula.text`): one implementation.
"""
from __future__ import annotations

import re

from ..tracing import Trace
from . import latex
from .latex import esc


_ASSIGNMENT = re.compile(r"\s*([A-Za-z_][\w\s,]*?)\s*(?:\+|-|\*|/|@)?=(?!=)")


def _assigned(code: dict) -> set:
    """The names the listed code assigns (`b = ...`, `a, b = ...`): a record's letter equal to one
    would read, beside that code, as the learner's variable, so those count as taken too."""
    names = set()
    for _, lines in code.values():
        for line in lines:
            m = _ASSIGNMENT.match(line)
            if m:
                names.update(n.strip() for n in m.group(1).split(",") if n.strip().isidentifier())
    return names


class Graph:
    """Look-ups over a Trace that frames and the panel text need."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.nodes = {n.id: n for n in trace.nodes}
        self.edges = {e.id: e for e in trace.edges}
        self.into: dict = {}
        self.out_of: dict = {}
        for e in trace.edges:
            self.into.setdefault(e.dst, []).append(e)
            self.out_of.setdefault(e.src, []).append(e)
        for lst in self.into.values():
            lst.sort(key=lambda e: e.slot)
        # the learner's names in this graph (leaves, outputs, named intermediates)
        self.tensor_names = {n.name for n in trace.nodes if n.kind in ("leaf", "output") and n.name} | \
            {n.tensor_name for n in trace.nodes if n.tensor_name} | _assigned(trace.code)

    def leaf_of(self, node_id: str):
        """The leaf tensor node behind an AccumulateGrad node (None for other nodes)."""
        node = self.nodes[node_id]
        if node.kind != "accumulate":
            return None
        for e in self.into.get(node_id, ()):
            if self.nodes[e.src].kind == "leaf":
                return self.nodes[e.src]
        return None

    @staticmethod
    def output_nr(edge) -> int:
        """Which output of edge.src the edge reads (multi-output ops such as split)."""
        return edge.output_nr

    def gradient_edges_out(self, node_id: str) -> list:
        """Edges along which gradient can reach `node_id` (its consumers, not saved tensors)."""
        return [e for e in self.out_of.get(node_id, ()) if e.slot >= 0 and self.nodes[e.dst].kind != "output"]


# -- formulas ------------------------------------------------------------------------
class Formula:
    """A node's formulas with its own names and constants: the output's name (or the record's
    symbol), each input's name (a named tensor), value (a constant) or symbol."""

    def __init__(self, graph, node):
        self.node = node
        self.names: list = []
        consts = dict(node.constants)
        self.params = {k: latex.number(v) for k, v in consts.items() if not k.isdigit()}
        n = max(len(node.symbols), max((e.slot + 1 for e in graph.into.get(node.id, ())), default=0))
        by_slot = {e.slot: e for e in graph.into.get(node.id, ()) if e.slot >= 0}
        self.inputs = []
        seen: dict = {}   # (source node, output) -> its symbol: one tensor used twice reads a′ + a′
        for slot in range(n):
            if str(slot) in consts:
                self.inputs.append(latex.number(consts[str(slot)]))
                continue
            edge = by_slot.get(slot)
            source = (edge.src, edge.output_nr) if edge is not None else None
            if source in seen:
                self.inputs.append(seen[source])
                continue
            name = _tensor_name(graph, edge.src) if edge is not None else ""
            self.inputs.append(self._name(name or _free(graph, node.symbol(slot))))
            if source is not None:
                seen[source] = self.inputs[-1]
        self.out_text = _tensor_name(graph, node.id) or _free(graph, node.out_symbol)
        self.out = self._name(self.out_text)

    def _name(self, text: str) -> str:
        self.names.append(text)
        return latex.name(len(self.names) - 1)

    def input_text(self, slot: int) -> str:
        """The plain name of input `slot` (for ∂L/∂name)."""
        k = latex.name_index(self.inputs[slot]) if slot < len(self.inputs) else None
        return self.names[k] if k is not None else self.node.symbol(slot)

    def latex(self, template: str) -> str:
        """The record's LaTeX with this node's names (as placeholders) and constants put in."""
        filled = latex.fill(template, self.inputs, self.out, self.params)
        return latex.signs(latex.coefficients(latex.exponents(filled)))

    def render(self, template: str) -> str:
        """MathML, one <math> per top-level clause (y = x ⋆ w + b: …, s = (2, 2), …) so a long
        formula wraps between its clauses in a narrow panel instead of running off its edge."""
        return latex.mathml_clauses(self.latex(template), tuple(self.names))

    def text(self, template: str) -> str:
        """The same formula as plain Unicode (c = 2a, ∂L/∂a = ḡ ⊙ 3a²), for Graphviz labels and captions."""
        return latex.unicode(self.latex(template), tuple(self.names))

    def forward_text(self) -> str:
        """The op's formula as Unicode (its record's Unicode formula when it has no LaTeX)."""
        return self.text(self.node.latex) if self.node.latex else self.node.formula

    def headline(self, limit: int = 48) -> str:
        """The formula for a diagram label: all of it when short, else its first clause, before the
        index form and the constants the panel spells out (y = x ⋆ w + b for a convolution)."""
        full = self.forward_text()
        if len(full) <= limit or not self.node.latex:
            return full
        head = re.split(r":\\;|,\\quad", self.node.latex, maxsplit=1)[0]
        return self.text(head) if head != self.node.latex else full

    def vjp_text(self, slot: int) -> str:
        """∂L/∂input = the VJP for input `slot`, as Unicode."""
        if not self.node.vjp_latex:
            return f"∂L/∂{self.input_text(slot)} = {self.node.vjp_formula(slot)}"
        lhs = r"\frac{\partial L}{\partial " + (self.inputs[slot] if slot < len(self.inputs) else "x") + "} = "
        return self.text(lhs + self.node.vjp_latex[min(slot, len(self.node.vjp_latex) - 1)])

    def forward(self) -> str:
        """The op's formula as MathML (its Unicode formula as text when the record has no LaTeX)."""
        if self.node.latex:
            return self.render(self.node.latex)
        return f'<span class="gv-formula">{esc(self.node.formula)}</span>'

    def vjp(self, slot: int) -> str:
        """∂L/∂input = the record's VJP for that input slot, as MathML."""
        node = self.node
        lhs = r"\frac{\partial L}{\partial " + (self.inputs[slot] if slot < len(self.inputs) else "x") + "} = "
        if node.vjp_latex:
            return self.render(lhs + node.vjp_latex[min(slot, len(node.vjp_latex) - 1)])
        return self.render(lhs) + f' <span class="gv-formula">{esc(node.vjp_formula(slot))}</span>'

    def partial(self) -> str:
        """∂L/∂out as MathML."""
        return self.render(r"\frac{\partial L}{\partial " + self.out + "}")


def _free(graph, symbol: str) -> str:
    """A record's symbol, primed when one of the learner's tensors has that name (an unnamed
    intermediate must not read as the leaf `a`)."""
    while symbol in graph.tensor_names:
        symbol += "′"
    return symbol


def _tensor_name(graph, node_id: str) -> str:
    """The name of the tensor a node stands for: a leaf (or its AccumulateGrad), a named output."""
    node = graph.nodes[node_id]
    if node.kind == "accumulate":
        leaf = graph.leaf_of(node_id)
        return leaf.name if leaf is not None else ""
    if node.kind in ("leaf", "output"):
        return node.name
    if node.tensor_name:
        return node.tensor_name
    named = [graph.nodes[e.dst].name for e in graph.out_of.get(node_id, ())
             if graph.nodes[e.dst].kind == "output" and graph.nodes[e.dst].name]
    return named[0] if len(named) == 1 else ""
