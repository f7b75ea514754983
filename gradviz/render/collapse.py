"""Which nodes a diagram draws: scopes folded into boxes, and big graphs folded to fit.

By default (max_nodes="auto", no collapse=) a graph whose drawing would exceed a few screens
(render/size.py says how big and why) is folded until the estimate fits; an explicit
`max_nodes=N` folds to N drawn nodes instead, `collapse=` folds the scopes it names (and then
at most 400 nodes are drawn, as without it), and `max_nodes=None` or `collapse=False` folds
nothing by itself.

The plan never changes the Trace; it maps hidden node ids to the placeholder
(group) that stands for them, so the player can still find where a hidden node
went. Reductions, applied in order until the graph fits:

1. scopes named by `collapse` (or, with collapse="scopes", the model's modules: the outermost
   scopes, or one level in when a single scope holds all the others);
2. long chains (each node one input, one consumer): the middle becomes one node;
3. the largest of the model's modules, one by one; once they fit, the boxes are opened one level at a
   time into their own modules while the drawing still fits (one box per block, not one for all);
4. a band: nodes are ranked by their distance from the outputs and the
   nodes farthest from both the outputs and the inputs are hidden together,
   which folds long runs of repeated blocks into one note.
Leaves, AccumulateGrad nodes and saved tensors whose every consumer is hidden
in one group are hidden with it, so a folded layer takes its parameters along.
"""
from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from ..tracing import Trace
from .size import FLOOR, Budget, Sizes, estimate, text_box

AUTO = "auto"           # max_nodes default: fold to fit the screen budget of render/size.py
COLLAPSE_CAP = 400      # drawn nodes at most with an explicit collapse= and max_nodes="auto"
LABEL_WIDTH = 50        # characters per line of a folded box's label
PARAM_LINES = 3         # lines of parameter names on a folded box
NOTE_CHAR_W, NOTE_LINE_H = 5.4, 11.0   # the footnote's 9 pt monospace
CHAIN_KEEP = 2          # nodes kept visible at each end of a folded chain
TOP_SHARE = 0.6         # share of the budget that goes to the nodes nearest the outputs
SATELLITES = ("accumulate", "saved", "leaf")


def count_nodes(n: int) -> str:
    """"1 node", "1,234 nodes": every count of nodes a diagram or player writes."""
    return f"{n:,} node{'' if n == 1 else 's'}"


@dataclass
class Group:
    """One placeholder node standing for hidden trace nodes."""
    id: str                 # g0, g1, ... (the SVG <g> id of the placeholder)
    kind: str               # "scope" | "chain" | "band"
    title: str
    members: list = field(default_factory=list)
    scope: tuple = ()       # the cluster the placeholder is drawn in

    def counts(self, trace_index: dict) -> Counter:
        return Counter(trace_index[m].name or trace_index[m].kind for m in self.members
                       if trace_index[m].kind in ("op", "accumulate"))

    def steps(self, trace_index: dict) -> int:
        """The backward steps inside: its ops and AccumulateGrads (what its label counts as nodes)."""
        return sum(self.counts(trace_index).values())

    def params(self, trace_index: dict) -> list:
        names = [m for m in self.members if trace_index[m].kind == "leaf" and trace_index[m].name]
        return [trace_index[m].name for m in sorted(names, key=_trace_order)]

    def label_lines(self, trace_index: dict) -> list:
        """The box's label, line by line: title, op count, what it hides, its parameters (wrapped at
        LABEL_WIDTH characters, named inside the box's own module where that is unambiguous)."""
        rows = [self.title]
        counts = self.counts(trace_index)
        if self.kind == "scope":   # the count of what the box lists below (its ops and AccumulateGrads)
            rows.append(count_nodes(sum(counts.values())))
        if counts:
            parts = [f"{name} ×{count:,}" for name, count in counts.most_common()]
            rows.extend(wrap_items(parts, "", 2, "kinds"))
        names = self.params(trace_index)
        if names:
            rows.extend(wrap_items(relative_names(names, self.title if self.kind == "scope" else ""),
                                   "params: ", PARAM_LINES))
        return rows


@dataclass
class ViewEdge:
    id: str                 # the id of the first trace edge it draws
    src: str
    dst: str
    members: tuple          # trace edge ids drawn by this one edge
    slot: int = 0


@dataclass
class View:
    """What to draw: visible trace nodes, placeholders, and edges between them."""
    nodes: list                       # visible trace node ids, in trace order
    groups: list                      # Group placeholders
    edges: list                       # ViewEdge
    owner: dict                       # hidden trace node id -> group id
    edge_owner: dict                  # trace edge id not drawn under its own id -> the id that draws it
    notes: list                       # one line per reduction, for the diagram's footnote
    total_nodes: int = 0
    fitted: bool = False              # folded by default, to fit the screen budget
    size: tuple = ()                  # the estimated (width, height) in points, when estimated

    @property
    def hidden(self) -> int:
        return len(self.owner)


class _Planner:
    def __init__(self, trace: Trace):
        self.trace = trace
        self.index = {n.id: n for n in trace.nodes}
        self.owner: dict = {}
        self.groups: dict = {}
        self.notes: list = []
        self._next = 0
        self._boxes: dict = {}      # (group id, member count) -> its box, for the estimates
        self.consumers: dict = {}
        self.inputs: dict = {}
        self.ends = [(e.src, e.dst) for e in trace.edges]   # every trace edge, input to consumer
        for e in trace.edges:
            self.consumers.setdefault(e.src, []).append(e.dst)
            self.inputs.setdefault(e.dst, []).append(e.src)
        self.by_scope: dict = {}    # scope path prefix -> op node ids under it
        for n in trace.nodes:
            if n.kind == "op":
                for k in range(1, len(n.scope) + 1):
                    self.by_scope.setdefault(tuple(n.scope[:k]), []).append(n.id)

    # -- the visible graph --------------------------------------------------------------
    def rep(self, node_id: str) -> str:
        return self.owner.get(node_id, node_id)

    def drawn_pairs(self) -> list:
        """(input, consumer) as drawn, for every trace edge: a hidden end is the box it is folded into
        (one lookup each, without a call: this runs over every edge at every fold tried)."""
        owner = self.owner.get
        return [(owner(s, s), owner(d, d)) for s, d in self.ends]

    def visible_count(self) -> int:
        return len(self.trace.nodes) - len(self.owner) + len(self.groups)

    def new_group(self, kind: str, title: str, members, scope: tuple = ()) -> Group:
        group = Group(f"g{self._next}", kind, title, [], scope)
        self._next += 1
        self.groups[group.id] = group
        for m in members:
            self.assign(m, group)
        self.absorb_satellites(group)
        return group

    def assign(self, node_id: str, group: Group) -> None:
        old = self.owner.get(node_id)
        if old is not None and old != group.id:
            self.groups[old].members.remove(node_id)
        self.owner[node_id] = group.id
        group.members.append(node_id)

    def absorb_satellites(self, group: Group) -> None:
        """Hide the leaves, AccumulateGrads and saved tensors whose consumers all sit in `group`
        (only the inputs of its members can qualify, so this stays linear overall)."""
        frontier = [s for m in list(group.members) for s in self.inputs.get(m, ())]
        while frontier:
            node_id = frontier.pop()
            if node_id in self.owner or self.index[node_id].kind not in SATELLITES:
                continue
            if all(self.rep(d) == group.id for d in self.consumers.get(node_id, ())):
                self.assign(node_id, group)
                frontier.extend(self.inputs.get(node_id, ()))   # a leaf behind its AccumulateGrad

    def snapshot(self) -> tuple:
        return (dict(self.owner), {k: Group(g.id, g.kind, g.title, list(g.members), g.scope)
                                   for k, g in self.groups.items()}, list(self.notes), self._next)

    def restore(self, state: tuple) -> None:
        owner, groups, notes, nxt = state
        self.owner, self.notes, self._next = dict(owner), list(notes), nxt
        self.groups = {k: Group(g.id, g.kind, g.title, list(g.members), g.scope) for k, g in groups.items()}

    # -- the drawn size -----------------------------------------------------------------------
    def visible(self) -> list:
        """The trace nodes not folded away, in trace order."""
        owner = self.owner
        return [n.id for n in self.trace.nodes if n.id not in owner]

    def estimate(self, sizes: dict, rankdir: str, labelled: bool, default: tuple = (60.0, 30.0)) -> tuple:
        """(width, height) in points of the drawing as folded so far (render/size.py; `default`: the
        box of a node not in `sizes`)."""
        vertices = self.visible()
        boxes = dict(sizes)
        for g in self.groups.values():
            if g.members:
                vertices.append(g.id)
                key = (g.id, len(g.members))
                if key not in self._boxes:
                    self._boxes[key] = text_box(g.label_lines(self.index))
                boxes[g.id] = self._boxes[key]
        edges = self.drawn_pairs()
        w, h = estimate(vertices, edges, boxes, rankdir, labelled, default)
        if self.owner:
            # the notes under a folded drawing (9 pt text): one per fold so far, a line summing up
            # the modules and the one naming max_nodes=None
            notes = self.notes + ["x" * 110] * 2
            w = max(w, max(len(n) for n in notes) * NOTE_CHAR_W + 16.0)
            h += len(notes) * NOTE_LINE_H
        return w, h

    def widest_rank(self, budget: Budget, sizes: dict) -> int:
        """How many nodes of the usual width fit side by side in the budget's width."""
        widths = sorted(sizes[n] [0] for n in sizes if n not in self.owner) or [60.0]
        return max(2, int(budget.width // (widths[len(widths) // 2] + 18.0)))

    # -- 1 and 3: scopes -------------------------------------------------------------------
    def collapse_scope(self, path: tuple) -> Group | None:
        members = [m for m in self.by_scope.get(path, ()) if m not in self.owner]
        if not members:
            return None
        return self.new_group("scope", path[-1], members, scope=path[:-1])

    def scopes_would_fit(self, paths: list, budget: int) -> bool:
        """Whether folding every one of `paths` would bring the graph under budget (a cheap
        bound that ignores the satellites each box would take along)."""
        hidden = sum(len([m for m in self.by_scope.get(p, ()) if m not in self.owner]) for p in paths)
        return self.visible_count() - hidden + len(paths) <= budget

    def module_depth(self) -> int:
        """How deep "scopes" folds: the first level at which the graph divides into more than one
        scope. A model whose forward holds everything is one outermost scope: folding it would
        draw one box, so its own modules (layers, blocks) are folded instead."""
        scopes = [tuple(n.scope) for n in self.trace.nodes if n.kind == "op"]
        depth = 1
        # one level in while every op sits inside the same scope and some sit deeper
        while all(len(s) >= depth for s in scopes) and len({s[:depth] for s in scopes}) == 1 and \
                any(len(s) > depth for s in scopes):
            depth += 1
        return depth

    def modules(self) -> list:
        """The scopes default folding folds: the outermost ones, or one level in while a single
        scope holds every scoped op (a model's forward, with the loss computed outside it)."""
        scopes = [tuple(n.scope) for n in self.trace.nodes if n.kind == "op" and n.scope]
        depth = 1
        while len({s[:depth] for s in scopes}) == 1 and any(len(s) > depth for s in scopes):
            depth += 1
        paths = list(dict.fromkeys(s[:depth] for s in scopes if len(s) >= depth))   # in trace order
        # a module of one op (a ReLU) would be a box as big as its node: nothing to gain
        return sorted((s for s in paths if len(self.by_scope[s]) > 1), key=lambda s: -len(self.by_scope[s]))

    def submodules(self, path: tuple) -> list:
        """The modules one level inside `path` that hold more than one op, largest first."""
        subs = dict.fromkeys(tuple(self.index[m].scope[:len(path) + 1]) for m in self.by_scope.get(path, ())
                             if len(self.index[m].scope) > len(path))
        return sorted((s for s in subs if len(self.by_scope[s]) > 1), key=lambda s: -len(self.by_scope[s]))

    def scope_paths(self, wanted) -> list:
        """The scope paths `collapse` names: "scopes" (the model's modules, see module_depth),
        names or paths."""
        paths = []
        seen = set()
        depth = self.module_depth() if wanted == "scopes" else 0
        for n in self.trace.nodes:
            if n.kind != "op" or not n.scope:
                continue
            scope = tuple(n.scope)
            if wanted == "scopes":
                hit = scope[:depth] if len(scope) >= depth else None
            else:
                hit = None
                for want in wanted:
                    if isinstance(want, str):
                        if want in scope:
                            hit = scope[:scope.index(want) + 1]
                            break
                    elif tuple(want) == scope[:len(want)]:
                        hit = tuple(want)
                        break
            if hit and hit not in seen:
                seen.add(hit)
                paths.append(hit)
        return paths

    # -- 2: chains -------------------------------------------------------------------------------
    def collapse_chains(self, fits, collect: list | None = None) -> None:
        """Fold long chains (each node one input, one consumer), longest first, until fits();
        with `collect`, only list them there."""
        ins: dict = {}
        outs: dict = {}
        for e in self.trace.edges:
            if self.index[e.src].kind == "saved":
                continue   # saved tensors follow their node; they never break a chain
            s, d = self.rep(e.src), self.rep(e.dst)
            if s == d:
                continue
            outs.setdefault(s, []).append(d)
            ins.setdefault(d, []).append(s)

        def link(v):
            n = self.index.get(v)
            return (n is not None and n.kind == "op" and v not in self.owner
                    and len(ins.get(v, ())) == 1 and len(outs.get(v, ())) == 1)

        runs = []
        for n in self.trace.nodes:
            v = n.id
            if not link(v) or link(ins[v][0]):
                continue
            run = [v]
            while link(outs[run[-1]][0]):
                run.append(outs[run[-1]][0])
            if len(run) > 2 * CHAIN_KEEP + 2:
                runs.append(run)
        if collect is not None:
            collect.extend(sorted(runs, key=len, reverse=True))
            return
        for run in sorted(runs, key=len, reverse=True):
            if fits():
                break
            self.fold_chain(run)

    def chain_runs(self) -> list:
        """The foldable chains, longest first (see collapse_chains)."""
        runs: list = []
        self.collapse_chains(lambda: False, runs)
        return runs

    def fold_chain(self, run: list) -> None:
        """Fold the middle of one chain into a box, CHAIN_KEEP nodes staying at each end."""
        middle = run[CHAIN_KEEP:-CHAIN_KEEP]
        scope = _common_prefix([tuple(self.index[m].scope) for m in middle])
        group = self.new_group("chain", f"{len(middle):,} nodes in a chain", middle, scope=scope)
        self.notes.append(f"{group.id}: a chain of {len(middle):,} nodes folded "
                          f"({_summary(group.counts(self.index))})")

    # -- 4: band --------------------------------------------------------------------------------
    def band_levels(self) -> tuple:
        """What a band is cut from, as folded so far: (the drawn vertices in order, their inputs
        as drawn, their distance from the outputs, the vertices at each distance)."""
        preds: dict = {}
        for s, d in set(self.drawn_pairs()):
            if s != d:
                preds.setdefault(d, set()).add(s)
        vertices = self.visible() + list(self.groups)
        level = {}
        queue = deque()
        for r in self.trace.roots:
            level[self.rep(r)] = 0
            queue.append(self.rep(r))
        while queue:   # breadth-first from the outputs towards the inputs (safe with cycles)
            v = queue.popleft()
            for p in preds.get(v, ()):
                if p not in level:
                    level[p] = level[v] + 1
                    queue.append(p)
        deepest = max(level.values(), default=0) + 1
        by_level: dict = {}
        for v in vertices:
            by_level.setdefault(level.get(v, deepest), []).append(v)
        return vertices, preds, {v: level.get(v, deepest) for v in vertices}, by_level

    def collapse_band(self, budget: int, per_level: int | None = None, graph: tuple | None = None) -> None:
        """Fold a band of the nodes farthest from the outputs and the inputs, keeping at most `budget`
        drawn nodes; `graph`: band_levels() of the state as it is now, when the caller has it."""
        vertices, preds, level, by_level = graph or self.band_levels()
        order = {v: i for i, v in enumerate(vertices)}
        levels = sorted(by_level)
        keep: set = set()
        room = budget - 1    # one placeholder for everything hidden
        top_room = int(room * TOP_SHARE)
        # per_level: at most this many kept side by side at one depth (a wide fan-in keeps a few
        # of its inputs; the others go with the hidden band)
        per_level = per_level or room
        for lv in levels:
            for v in sorted(by_level[lv], key=order.get)[:per_level]:
                if len(keep) >= top_room:
                    break
                keep.add(v)
        for lv in reversed(levels):
            for v in sorted(by_level[lv], key=order.get)[:per_level]:
                if len(keep) >= room:
                    break
                keep.add(v)
        hidden = _convex({v for v in vertices if v not in keep}, preds)
        hidden = [v for v in vertices if v in hidden]
        if not hidden:
            return
        kept_levels = sorted(level[v] for v in hidden)
        members = []
        for v in hidden:
            if v in self.groups:
                old = self.groups.pop(v)
                members.extend(old.members)
                for m in old.members:
                    del self.owner[m]
            else:
                members.append(v)
        group = self.new_group("band", "", members)
        counts = group.counts(self.index)
        steps = sum(counts.values())   # counted as every box counts: its ops and AccumulateGrads
        group.title = f"{count_nodes(steps)} hidden"
        self.notes.append(f"{group.id}: {count_nodes(steps)} between depth {kept_levels[0]} and "
                          f"{kept_levels[-1]} from the output folded ({_summary(counts)})")


def _convex(hidden: set, preds: dict) -> set:
    """`hidden` and every vertex on a path from one hidden vertex to another: a band that gradients
    leave and enter again would be drawn as a box with edges both ways to the nodes between (a
    cycle that reads as nonsense, and that Graphviz's dot can fail to lay out: "lost edge")."""
    succs: dict = {}
    for d, ss in preds.items():
        for s in ss:
            succs.setdefault(s, set()).add(d)

    def reach(links: dict) -> set:
        seen, stack = set(), [v for h in hidden for v in links.get(h, ())]
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(links.get(v, ()))
        return seen
    return hidden | (reach(succs) & reach(preds))


def _trace_order(node_id: str):
    return (len(node_id), node_id)     # n2 before n10: the order the trace made them


def relative_names(names: list, title: str = "") -> list:
    """Parameter names as seen from inside a module's box: "transformer.h.0.mlp.c_proj.weight" in
    the box "0 (Block)" is "mlp.c_proj.weight". The module is found by its attribute name (the
    title's first word) in every name, else the names' common dotted prefix is dropped; names stay
    whole where the short ones would be ambiguous."""
    split = [n.split(".") for n in names]
    attr = title.split(" ")[0] if title else ""
    cut = None
    if attr and all(attr in parts[:-1] for parts in split):
        cut = [len(parts) - parts[::-1].index(attr) for parts in split]   # after its last occurrence
    elif len(split) > 1:
        common = 0
        while all(len(p) > common + 1 and p[common] == split[0][common] for p in split):
            common += 1
        cut = [common] * len(split) if common else None
    if cut is None:
        return list(names)
    short = [".".join(parts[c:]) for parts, c in zip(split, cut)]
    return short if len(set(short)) == len(set(names)) else list(names)


def wrap_items(items: list, head: str = "", max_lines: int = 2, what: str = "more", width: int = LABEL_WIDTH) -> list:
    """`items` joined by commas into at most `max_lines` lines of about `width` characters, the
    first starting with `head`; what does not fit is counted at the end ("+ 9 more")."""
    lines: list = [[]]
    for item in items:
        line = lines[-1]
        length = len(head if len(lines) == 1 else "  ") + sum(len(x) + 2 for x in line) + len(item) + 1
        if line and length > width:
            if len(lines) == max_lines:
                break
            lines.append([item])
        else:
            line.append(item)
    shown = sum(len(line) for line in lines)
    last = lines[-1]

    def text(k: int, line: list, rest: int) -> str:
        lead = head if k == 0 else "  "
        tail = f"+ {rest:,} {'more' if what == 'more' else 'more ' + what}" if rest else ""
        body = ", ".join(line)
        return lead + body + (("," if body else "") + " " + tail if tail else "")

    rest = len(items) - shown
    while rest and len(last) > 1 and len(text(len(lines) - 1, last, rest)) > width:
        last.pop()
        rest += 1
    return [text(k, line, rest if k == len(lines) - 1 else 0) + ("," if k < len(lines) - 1 else "")
            for k, line in enumerate(lines)]


def _common_prefix(paths: list) -> tuple:
    if not paths:
        return ()
    prefix = paths[0]
    for p in paths[1:]:
        i = 0
        while i < min(len(prefix), len(p)) and prefix[i] == p[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _summary(counts: Counter, limit: int = 4) -> str:
    parts = [f"{name} ×{count:,}" for name, count in counts.most_common(limit)]
    if len(counts) > limit:
        parts.append(f"{len(counts) - limit} more kinds")
    return ", ".join(parts)


def summary(group: Group, index: dict) -> str:
    """What a placeholder hides, in one line: the most common op names and their counts
    (`index`: trace node id -> node)."""
    return _summary(group.counts(index))


def plan(trace: Trace, max_nodes: int | str | None = AUTO, collapse=None, sizes: dict | None = None,
         rankdir: str = "TB", labelled: bool = False, budget: Budget | None = None) -> View:
    """Decide what to draw (see the module). `collapse`: None, False (fold nothing), "scopes", or
    scope names/paths to fold into boxes. max_nodes: "auto", a number of drawn nodes, or None.
    sizes (node id -> (width, height) in points, or a size.Sizes measuring them), rankdir and labelled (edges
    carry labels) feed the size estimate of "auto"."""
    p = _Planner(trace)
    if collapse is False:
        return _view(p, trace)
    if collapse:
        wanted = "scopes" if collapse == "scopes" else [collapse] if isinstance(collapse, str) else list(collapse)
        for path in p.scope_paths(wanted):
            group = p.collapse_scope(path)
            if group is not None:
                p.notes.append(f"{group.id}: scope '{'/'.join(path)}' drawn as one box "
                               f"({count_nodes(group.steps(p.index))})")
        if max_nodes == AUTO:
            max_nodes = COLLAPSE_CAP     # the boxes asked for decide; the old cap keeps it drawable
    if max_nodes == AUTO:
        return _fit(p, trace, sizes if sizes is not None else {}, rankdir, labelled, budget or Budget())
    if max_nodes is not None and max_nodes > 0 and p.visible_count() > max_nodes:
        def fits() -> bool:
            return p.visible_count() <= max_nodes
        p.collapse_chains(fits)
        outermost = p.scope_paths("scopes")
        if not fits() and outermost and p.scopes_would_fit(outermost, max_nodes):
            for path in sorted(outermost, key=lambda s: -len(p.by_scope[s])):
                if fits():
                    break
                group = p.collapse_scope(path)
                if group is not None:
                    p.notes.append(f"{group.id}: scope '{'/'.join(path)}' folded into one box "
                                   f"({count_nodes(group.steps(p.index))})")
        if not fits():
            p.collapse_band(max_nodes)
    return _view(p, trace)


def _fit(p: _Planner, trace: Trace, sizes, rankdir: str, labelled: bool, budget: Budget) -> View:
    """max_nodes="auto": fold chains, then the model's modules, then a band of repeated blocks,
    each only as far as needed, until the estimated drawing fits the budget. `sizes`: a dict of
    the boxes, or size.Sizes, which measures a box only when a fold cannot be decided without it."""
    lazy = isinstance(sizes, Sizes)

    def measured() -> dict:
        return sizes.measure(p.visible()) if lazy else sizes

    def exact() -> tuple:
        return p.estimate(measured(), rankdir, labelled)

    def fits() -> bool:
        if lazy and not budget.fits(p.estimate(sizes.known, rankdir, labelled, FLOOR)):
            return False       # too big even with every box not measured yet at its smallest
        return budget.fits(exact())

    if p.visible_count() <= budget.small or fits():
        view = _view(p, trace)
        view.size = exact()
        return view

    _fold_fewest(p, p.chain_runs(), p.fold_chain, fits)
    if not fits():
        start = p.snapshot()
        folded = _fold_fewest(p, p.modules(), p.collapse_scope, fits)
        if fits():
            _open_while_fits(p, start, folded, fits)
    if not fits():
        # the most drawn nodes a band leaves that still fit: a binary search over the band's room
        before = p.snapshot()
        graph = p.band_levels()     # each try starts from the state before it
        per_level = p.widest_rank(budget, measured())
        lo, hi = 2, p.visible_count()
        while lo < hi:
            room = (lo + hi + 1) // 2
            p.restore(before)
            p.collapse_band(room, per_level, graph)
            if fits():
                lo = room
            else:
                hi = room - 1
        p.restore(before)
        p.collapse_band(lo, per_level, graph)
    view = _view(p, trace)
    view.fitted = bool(view.groups)
    boxes = [g for g in view.groups if g.kind == "scope"]
    kinds = Counter(g.title.split(" (")[-1].rstrip(")") if " (" in g.title else g.title for g in boxes)
    if boxes:
        view.notes.insert(0, f"{len(boxes):,} module{'s' if len(boxes) != 1 else ''} folded into boxes "
                             f"({_summary(kinds)})")
    view.size = exact()
    if view.fitted:
        view.notes.append(f"folded to fit {budget.describe()}: max_nodes=None (or collapse=False) "
                          "draws every node")
    return view


def _fold_fewest(p: _Planner, items: list, fold, fits) -> list:
    """Fold the fewest of `items` (in their order) that make the drawing fit, or all of them; a
    binary search, so a model of 500 modules is estimated a dozen times, not 500. Returns those folded."""
    if not items:
        return []
    before = p.snapshot()
    for item in items:
        fold(item)
    if not fits():
        return items
    lo, hi = 1, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        p.restore(before)
        for item in items[:mid]:
            fold(item)
        if fits():
            hi = mid
        else:
            lo = mid + 1
    p.restore(before)
    for item in items[:lo]:
        fold(item)
    return items[:lo]


def _open_while_fits(p: _Planner, start: tuple, folded: list, fits) -> None:
    """The folded modules opened one level at a time, each box into boxes of its own modules (a
    GPT's list of blocks into one box per block, then each block into its attention and MLP), as long
    as the drawing still fits: the finest level of the model that does. `start`: the plan before the
    modules were folded."""
    while True:
        finer = [sub for path in folded for sub in (p.submodules(path) or [path])]
        if finer == folded:
            return
        p.restore(start)
        for path in finer:
            p.collapse_scope(path)
        if not fits():
            p.restore(start)
            for path in folded:
                p.collapse_scope(path)
            return
        folded = finer


def _view(p: _Planner, trace: Trace) -> View:
    edges: list = []
    edge_owner: dict = {}
    merged: dict = {}
    for e in trace.edges:
        s, d = p.rep(e.src), p.rep(e.dst)
        if s == d:
            edge_owner[e.id] = s        # inside a placeholder
            continue
        if s in p.groups or d in p.groups:
            # many edges into or out of a placeholder are drawn as one, so that a shared
            # parameter feeding 5,000 hidden ops does not draw 5,000 edges
            key = (s, d)
            if key in merged:
                view_edge = merged[key]
                view_edge.members += (e.id,)
                edge_owner[e.id] = view_edge.id
                continue
            merged[key] = view_edge = ViewEdge(e.id, s, d, (e.id,), e.slot)
            edges.append(view_edge)
            continue
        edges.append(ViewEdge(e.id, s, d, (e.id,), e.slot))
    groups = [g for g in p.groups.values() if g.members]
    return View([n.id for n in trace.nodes if n.id not in p.owner], groups, edges, dict(p.owner), edge_owner,
                list(p.notes), len(trace.nodes))
