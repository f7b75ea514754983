"""A node's formulas in the learner's terms, read from the Trace alone: the symbols the recording
gave the output and the inputs (one per tensor, the same in every node that touches it), the
constants the code used, and the record's LaTeX (a template in its own letters) filled with them. The step panel shows
them as MathML and the diagram's labels as Unicode (`Formula.text`): one implementation.
"""
from __future__ import annotations

import re
from functools import cached_property, lru_cache

from ..tracing import Trace, name_tensors, named
from . import latex
from .latex import esc


class Graph:
    """Look-ups over a Trace that frames and the panel text need."""

    def __init__(self, trace: Trace):
        if not named(trace):   # a Trace put together by hand: its tensors get their symbols now
            name_tensors(trace)
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
        self._formulas: dict = {}

    def formula(self, node) -> "Formula":
        """Formula(self, node), made once: a step's panel, its caption, its forward panel and the
        node's label all read the same one (it does not change once made)."""
        made = self._formulas.get(node.id)
        if made is None or made.node is not node:
            made = self._formulas[node.id] = Formula(self, node)
        return made

    @cached_property
    def steps_of(self) -> dict:
        """node id -> the backward steps that ran it, in the order they ran (made on first use)."""
        found: dict = {}
        for s in self.trace.steps:
            found.setdefault(s.node, []).append(s)
        return found

    def leaf_of(self, node_id: str):
        """The leaf tensor node behind an AccumulateGrad node (None for other nodes)."""
        node = self.nodes[node_id]
        if node.kind != "accumulate":
            return None
        for e in self.into.get(node_id, ()):
            if self.nodes[e.src].kind == "leaf":
                return self.nodes[e.src]
        return None

    def symbol(self, node_id: str, output_nr: int = 0) -> str:
        """The recording's symbol of the tensor that output of `node_id` is: a leaf's (or its
        AccumulateGrad's) name, an op's output name, an output node's name."""
        node = self.nodes[node_id]
        if node.kind == "accumulate":
            leaf = self.leaf_of(node_id)
            return leaf.name if leaf is not None else ""
        if node.kind == "op":
            return node.out_names[output_nr] if output_nr < len(node.out_names) else ""
        return node.name

    @staticmethod
    def output_nr(edge) -> int:
        """Which output of edge.src the edge reads (multi-output ops such as split)."""
        return edge.output_nr

    @cached_property
    def names_e(self) -> bool:
        """Whether a tensor of the recording is called e: its formulas then write Euler's number as exp."""
        return any("e" in n.out_names or "e" in n.in_names if n.kind == "op" else n.name == "e"
                   for n in self.trace.nodes)

    def gradient_edges_out(self, node_id: str) -> list:
        """Edges along which gradient can reach `node_id` (its consumers, not saved tensors)."""
        return [e for e in self.out_of.get(node_id, ()) if e.slot >= 0 and self.nodes[e.dst].kind != "output"]


# -- formulas ------------------------------------------------------------------------
# a diagram label's formula is its first clause past this many characters, and wraps between its
# terms past it (Graphviz never wraps a label: one long line makes the node wider than a small stage)
LABEL_WIDTH = 48
_BREAK_BEFORE = frozenset("+−⊙·×⋆@∘")


def wrap_terms(text: str, width: int = LABEL_WIDTH) -> list:
    """A formula's Unicode as lines of at most `width` characters where it can be: broken before a
    + − ⊙ · × ⋆ @ ∘ that stands outside brackets (a term longer than a line keeps a line of its
    own). [] for no text."""
    if len(text) <= width:
        return [text] if text else []
    words, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == " " and depth == 0:
            words.append(text[start:k])
            start = k + 1
    words.append(text[start:])
    pieces = [words[0]]
    for word in words[1:]:
        if word in _BREAK_BEFORE:
            pieces.append(word)
        else:
            pieces[-1] += " " + word
    lines: list = []
    for piece in pieces:
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines


def part_index(dim, in_shapes: list, slot: int, out_shape: tuple | None) -> str | None:
    """Where input `slot` sits in a cat's or a stack's output along `dim`, as LaTeX: a cat's rows of
    it (`:, 2{:}5`), a stack's index (`:, 1`) (`$part` in their VJP, ḡ[$part]); None where a shape it
    needs is not recorded."""
    shapes = in_shapes[:slot + 1]
    if not isinstance(dim, int) or out_shape is None or len(shapes) <= slot or any(s is None for s in shapes):
        return None
    stacked = all(len(s) + 1 == len(out_shape) for s in shapes)
    if not stacked and not all(len(s) == len(out_shape) for s in shapes):
        return None   # a cat reading a legacy empty tensor of another rank
    if stacked:
        return along(dim, len(out_shape), str(slot))
    d = dim % len(out_shape)
    start = sum(s[d] for s in shapes[:-1])
    return along(d, len(out_shape), f"{start}{{:}}{start + shapes[-1][d]}")


def along(dim: int, ndim: int | None, what: str) -> str:
    r"""`what` at dim `dim` of an index, as LaTeX, the way Python writes it: `:, 1{:}4` at dim 1; a dim
    counted from the end where the rank is not known, `\dots, 1{:}4` (the trailing dims implied)."""
    if ndim:
        return r":,\, " * (dim % ndim) + what
    if dim < 0:
        return r"\dots,\, " + what + r",\, :" * (-dim - 1)
    return r":,\, " * dim + what


def slice_text(start: int, end: int, step: int, size: int | None) -> str:
    """start:end:step as Python writes it, as LaTeX: `1{:}`, `{:}3`, `{:}{:}2`; an end past the size
    (torch keeps x[1:]'s end as 2⁶³ − 1) and a start of 0 left out."""
    if size is not None:
        start, end = (start + size if start < 0 else start), min(end + size if end < 0 else end, size)
    text = ("" if start == 0 else str(start)) + "{:}" + ("" if end == size or end >= 2 ** 62 else str(end))
    return text + ("" if step == 1 else "{:}" + str(step))


# where a record's formula ends its first clause (before the index form and the constants)
_FIRST_CLAUSE = re.compile(r":\\;|,\\quad")


@lru_cache(maxsize=8192)    # the names are placeholders here: a long graph fills one formula once
def _filled(template: str, inputs: tuple, out: str, params: tuple, outs: tuple) -> str:
    filled = latex.without_absent(latex.fill(template, list(inputs), out, dict(params), outs))
    return latex.signs(latex.coefficients(latex.unit_denominators(latex.exponents(filled))))


_WORD = re.compile(r"(?<![\w.])\w+")


def _letters(text: str, letters: dict) -> str:
    """`text` with each whole word that is a template letter replaced by its symbol."""
    return _WORD.sub(lambda m: letters.get(m.group(), m.group()), text)


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
        self._by_slot = by_slot
        self.inputs = []
        for slot in range(n):
            if str(slot) in consts:
                self.inputs.append(latex.ABSENT if consts[str(slot)] is None else latex.number(consts[str(slot)]))
                continue
            edge = by_slot.get(slot)
            if edge is not None:
                name = graph.symbol(edge.src, edge.output_nr)
            else:
                name = node.in_names[slot] if slot < len(node.in_names) else ""
            self.inputs.append(self._name(name or node.symbol(slot)))
        self.out_text = graph.symbol(node.id) or node.out_symbol
        self.out = self._name(self.out_text)
        # an op of several outputs whose record names each ($c, $c1: qr's Q and R): each output's own
        # symbol, or the record's for an output the graph does not use
        self.each_out = (self.out,) + tuple(self._name(self.output_text(nr)) for nr in range(1, len(node.out_symbols)))
        # a node of several outputs (split, unbind) lists each output's own symbol, t₁, t₂, in place of
        # the record's c₁, c₂, … (which would read t₁₁, t₁₂ with the first output's symbol as c)
        named = [n for n in node.out_names if n]
        self.outs = [self._name(n) for n in node.out_names] if named and len(named) == len(node.out_names) else []
        self._index_at(consts)
        self.exp_for_euler = graph.names_e
        self.letters = frozenset(n for n in self.names if len(n) == 1 and n.isalpha())   # o, p: maybe an index too

    def _index_at(self, consts: dict) -> None:
        """Where an indexing node reads or writes along its dim (`$index_at`, `$slice_at`), from its
        own dim, slice and shape; without a dim the record's words stand (c[…, idx])."""
        dim = consts.get("dim")
        if not isinstance(dim, int) or isinstance(dim, bool) or "_at" not in (self.node.latex or ""):
            return   # (every record that places an index writes it in its formula)
        given = self.in_shapes[0] if self.in_shapes else None   # the indexed tensor (select's output has a dim less)
        ndim = len(given) if given else None
        self.params["index_at"] = along(dim, ndim, r"\mathrm{idx}")
        if isinstance(consts.get("index"), int):
            self.params["select_at"] = along(dim, ndim, str(consts["index"]))
        if all(isinstance(consts.get(k), int) for k in ("start", "end", "step")):
            size = given[dim % ndim] if given else None
            self.params["slice_at"] = along(dim, ndim, slice_text(consts["start"], consts["end"], consts["step"], size))

    def output_text(self, nr: int) -> str:
        """The plain name of output `nr` (for the ∂L/∂name a node of several outputs receives)."""
        if nr < len(self.node.out_names) and self.node.out_names[nr]:
            return self.node.out_names[nr]
        if nr < len(self.node.out_symbols):
            return self.node.out_symbols[nr]
        return self.out_text + (f"_{nr}" if nr else "")

    def _name(self, text: str) -> str:
        self.names.append(text)
        return latex.name(len(self.names) - 1)

    def input_text(self, slot: int) -> str:
        """The plain name of input `slot` (for ∂L/∂name)."""
        k = latex.name_index(self.inputs[slot]) if slot < len(self.inputs) else None
        return self.names[k] if k is not None else self.node.symbol(slot)

    def latex(self, template: str) -> str:
        """The record's LaTeX with this node's names (as placeholders) and constants put in."""
        if self.exp_for_euler:
            template = latex.exp_for_euler(template)
        if self.letters:
            template = latex.primed_indices(template, self.letters)
        if self.outs:   # the record's list of outputs, c₁, c₂, …, becomes this node's symbols
            listed = r"{$c}_1, {$c}_2, \ldots" if r"{$c}_2" in template else r"{$c}_1"
            template = template.replace(listed, ", ".join(self.outs))
        return _filled(template, tuple(self.inputs), self.out, tuple(self.params.items()), self.each_out)

    def render(self, template: str) -> str:
        """MathML, one <math> per top-level clause (y = x ⋆ w + b: …, s = (2, 2), …) so a long
        formula wraps between its clauses in a narrow panel instead of running off its edge."""
        return latex.mathml_clauses(self.latex(template), tuple(self.names))

    def text(self, template: str) -> str:
        """The same formula as plain Unicode (c = 2a, ∂L/∂a = ḡ ⊙ 3a²), for Graphviz labels and captions."""
        return latex.unicode(self.latex(template), tuple(self.names))

    def forward_text(self) -> str:
        """The op's formula as Unicode (its record's Unicode formula when it has no LaTeX)."""
        return self.text(self.node.latex) if self.node.latex else self.plain_text()

    def plain_text(self) -> str:
        """A record's Unicode formula written by hand (a custom Function's, c = F.apply(a, b)) with
        this node's symbols for the template's letters: y = F.apply(x, w). Only the left side and
        the call's arguments are read, so the class name stays as it is."""
        node = self.node
        letters = {s: self.input_text(k) for k, s in enumerate(node.symbols)}
        letters[node.out_symbol] = self.output_text(0)
        letters.update({f"{node.out_symbol}{nr}": self.output_text(nr) for nr in range(node.n_outputs)})
        lhs, eq, rhs = node.formula.partition(" = ")
        call, paren, args = rhs.partition("(")
        return _letters(lhs, letters) + eq + call + paren + _letters(args, letters) if eq else node.formula

    def headline(self, limit: int = LABEL_WIDTH) -> str:
        """The formula for a diagram label: all of it when short, else its first clause, before the
        index form and the constants the panel spells out (y = x ⋆ w + b for a convolution)."""
        full = self.forward_text()
        if len(full) <= limit or not self.node.latex:
            return full
        head = _FIRST_CLAUSE.split(self.node.latex, maxsplit=1)[0]
        return self.text(head) if head != self.node.latex else full

    def headline_lines(self, sizing: bool = False) -> list:
        """The headline as a label's lines, wrapped between its terms (a BatchNorm's
        `… ⊙ layer1.0.bn1.weight + layer1.0.bn1.bias` on a line of its own). sizing: lines of x's as
        long, made without typesetting (what sizing a big graph's labels needs)."""
        if not sizing:
            return wrap_terms(self.headline())
        return ["x" * len(line) for line in wrap_terms(self._headline_shape())]

    def headline_length(self, limit: int = LABEL_WIDTH) -> int:
        """len(self.headline(limit)), without typesetting it."""
        return len(self._headline_shape(limit))

    def _headline_shape(self, limit: int = LABEL_WIDTH) -> str:
        """The headline with each name as that many x's (latex.unicode_shape), without typesetting it."""
        if not self.node.latex:
            return self.plain_text()
        full = latex.unicode_shape(self.latex(self.node.latex), tuple(self.names))
        head = _FIRST_CLAUSE.split(self.node.latex, maxsplit=1)[0]
        if len(full) <= limit or head == self.node.latex:
            return full
        return latex.unicode_shape(self.latex(head), tuple(self.names))

    def _vjp_latex(self, slot: int, axes: tuple) -> str:
        """∂L/∂input = the record's VJP, summed over the axes the input was broadcast along (the
        sum is part of what is sent, so it stands in the equation)."""
        lhs = r"\frac{\partial L}{\partial " + (self.inputs[slot] if slot < len(self.inputs) else "x") + "} = "
        rhs = latex.where_split(self._vjp_template(slot))[0]
        if axes:
            where = ("axes " if len(axes) > 1 else "axis ") + ", ".join(str(a) for a in axes)
            rhs = r"\sum_{\text{" + where + r"}} \left(" + rhs + r"\right)"
        return lhs + rhs

    def _vjp_template(self, slot: int) -> str:
        template = self.node.vjp_latex[min(slot, len(self.node.vjp_latex) - 1)]
        part = self._part(slot) if "$part" in template else None
        return template.replace("$part", part) if part is not None else template

    @cached_property
    def in_shapes(self) -> list:
        """Each input's shape where the recording has it (an edge's, or a tensor's without a gradient)."""
        values = self.node.in_values
        return [tuple(self._by_slot[k].shape) if k in self._by_slot and self._by_slot[k].shape is not None else
                tuple(values[k].shape) if k < len(values) and values[k] is not None else None
                for k in range(len(self.inputs))]

    def _part(self, slot: int) -> str | None:
        out = tuple(self.node.value.shape) if self.node.value is not None else None
        return part_index(dict(self.node.constants).get("dim"), self.in_shapes, slot, out)

    def _defined(self, slot: int) -> str:
        return latex.where_split(self._vjp_template(slot))[1] if self.node.vjp_latex else ""

    def where(self, slot: int) -> str:
        """What the VJP for input `slot` defines after it (ĝ = ḡ ⊙ w), as MathML; "" when nothing."""
        defined = self._defined(slot)
        return self.render(defined) if defined else ""

    def where_text(self, slot: int) -> str:
        """The same definitions as Unicode; "" when nothing."""
        defined = self._defined(slot)
        return self.text(defined) if defined else ""

    def vjp_text(self, slot: int, axes: tuple = ()) -> str:
        """∂L/∂input = the VJP for input `slot` (summed over `axes`), as Unicode."""
        if not self.node.vjp_latex:
            summed = f"Σ over {'axes' if len(axes) > 1 else 'axis'} {', '.join(map(str, axes))} of " if axes else ""
            return f"∂L/∂{self.input_text(slot)} = {summed}{self.node.vjp_formula(slot)}"
        return self.text(self._vjp_latex(slot, axes))

    def forward(self) -> str:
        """The op's formula as MathML (its Unicode formula as text when the record has no LaTeX)."""
        if self.node.latex:
            return self.render(self.node.latex)
        return f'<span class="gv-formula">{esc(self.plain_text())}</span>'

    def vjp(self, slot: int, axes: tuple = ()) -> str:
        """∂L/∂input = the record's VJP for that input slot (summed over `axes`), as MathML."""
        node = self.node
        if node.vjp_latex:
            return self.render(self._vjp_latex(slot, axes))
        lhs = r"\frac{\partial L}{\partial " + (self.inputs[slot] if slot < len(self.inputs) else "x") + "} = "
        summed = r"\sum_{\text{axis " + ", ".join(map(str, axes)) + "}}" if axes else ""
        return self.render(lhs + summed) + f' <span class="gv-formula">{esc(node.vjp_formula(slot))}</span>'

    def partial(self) -> str:
        """∂L/∂out as MathML."""
        return self.render(r"\frac{\partial L}{\partial " + self.out + "}")
