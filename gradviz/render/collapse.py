"""Which nodes a diagram draws: scopes folded into boxes, and big graphs cut to `max_nodes`.

The plan never changes the Trace; it maps hidden node ids to the placeholder
(group) that stands for them, so the player can still find where a hidden node
went. Reductions, applied in order until the graph fits:

1. scopes named by `collapse` (or, with collapse="scopes", the model's modules: the outermost
   scopes, or one level in when a single scope holds all the others);
2. long chains (each node one input, one consumer): the middle becomes one node;
3. the largest outermost scopes, one by one;
4. a band: nodes are ranked by their distance from the outputs and the
   nodes farthest from both the outputs and the inputs are hidden together,
   which folds long runs of repeated blocks into one note.
Leaves, AccumulateGrad nodes and saved tensors whose every consumer is hidden
in one group are hidden with it, so a folded layer takes its parameters along.
"""
from __future__ import annotations

import itertools
from collections import Counter, deque
from dataclasses import dataclass, field

from ..tracing import Trace

CHAIN_KEEP = 2          # nodes kept visible at each end of a folded chain
TOP_SHARE = 0.6         # share of the budget that goes to the nodes nearest the outputs
SATELLITES = ("accumulate", "saved", "leaf")


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

    def params(self, trace_index: dict) -> list:
        return [trace_index[m].name for m in self.members if trace_index[m].kind == "leaf" and trace_index[m].name]


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
        self._ids = itertools.count()
        self.consumers: dict = {}
        self.inputs: dict = {}
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

    def visible_count(self) -> int:
        return len(self.trace.nodes) - len(self.owner) + len(self.groups)

    def new_group(self, kind: str, title: str, members, scope: tuple = ()) -> Group:
        group = Group(f"g{next(self._ids)}", kind, title, [], scope)
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
    def collapse_chains(self, budget: int) -> None:
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
        for run in sorted(runs, key=len, reverse=True):
            if self.visible_count() <= budget:
                break
            middle = run[CHAIN_KEEP:-CHAIN_KEEP]
            scope = _common_prefix([tuple(self.index[m].scope) for m in middle])
            group = self.new_group("chain", f"{len(middle):,} nodes in a chain", middle, scope=scope)
            self.notes.append(f"{group.id}: a chain of {len(middle):,} nodes folded "
                              f"({_summary(group.counts(self.index))})")

    # -- 4: band --------------------------------------------------------------------------------
    def collapse_band(self, budget: int) -> None:
        preds: dict = {}
        for e in self.trace.edges:
            s, d = self.rep(e.src), self.rep(e.dst)
            if s != d:
                preds.setdefault(d, set()).add(s)
        vertices = [n.id for n in self.trace.nodes if n.id not in self.owner] + list(self.groups)
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
        order = {v: i for i, v in enumerate(vertices)}
        for v in vertices:
            by_level.setdefault(level.get(v, deepest), []).append(v)
        levels = sorted(by_level)
        keep: set = set()
        room = budget - 1    # one placeholder for everything hidden
        top_room = int(room * TOP_SHARE)
        for lv in levels:
            for v in sorted(by_level[lv], key=order.get):
                if len(keep) >= top_room:
                    break
                keep.add(v)
        for lv in reversed(levels):
            for v in sorted(by_level[lv], key=order.get):
                if len(keep) >= room:
                    break
                keep.add(v)
        hidden = [v for v in vertices if v not in keep]
        if not hidden:
            return
        kept_levels = sorted(level.get(v, deepest) for v in hidden)
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
        group.title = f"{len(group.members):,} nodes hidden"
        self.notes.append(f"{group.id}: {len(group.members):,} nodes between depth {kept_levels[0]} and "
                          f"{kept_levels[-1]} from the output folded ({_summary(group.counts(self.index))})")


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


def plan(trace: Trace, max_nodes: int | None = 400, collapse=None) -> View:
    """Decide what to draw. `collapse`: None, "scopes", or scope names/paths to fold into boxes."""
    p = _Planner(trace)
    if collapse:
        wanted = "scopes" if collapse == "scopes" else [collapse] if isinstance(collapse, str) else list(collapse)
        for path in p.scope_paths(wanted):
            group = p.collapse_scope(path)
            if group is not None:
                p.notes.append(f"{group.id}: scope '{'/'.join(path)}' drawn as one box "
                               f"({len(group.members):,} nodes)")
    if max_nodes is not None and max_nodes > 0 and p.visible_count() > max_nodes:
        p.collapse_chains(max_nodes)
        outermost = p.scope_paths("scopes")
        if p.visible_count() > max_nodes and outermost and p.scopes_would_fit(outermost, max_nodes):
            for path in sorted(outermost, key=lambda s: -len(p.by_scope[s])):
                if p.visible_count() <= max_nodes:
                    break
                group = p.collapse_scope(path)
                if group is not None:
                    p.notes.append(f"{group.id}: scope '{'/'.join(path)}' folded into one box "
                                   f"({len(group.members):,} nodes)")
        if p.visible_count() > max_nodes:
            p.collapse_band(max_nodes)
    return _view(p, trace)


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
