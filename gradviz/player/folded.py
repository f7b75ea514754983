"""Forward and backward through a folded box as one step each.

When a diagram folds a module (or a chain) into one box, the engine still creates and runs
every node inside it. Stepping through those one at a time would light the same box again and
again; instead a run of consecutive forward or backward steps inside one box becomes a single
frame. Forward: the box is created, and the panel names the nodes recorded and what leaves the
box. Backward: the box is active, every edge gradient left it along is flowing, and the panel
says what went in, what came out and which .grad were written, all read from the Trace.
"""
from __future__ import annotations

from collections import Counter
from functools import partial

from ..formatting import preview as preview_text
from ..formatting import shape
from ..render.collapse import count_nodes
from . import grids
from .explain import node_label
from .mathtext import esc
from .frames import Frame, FrameBuilder, Graph


def box_members(owners: dict, titles: dict, ids) -> dict:
    """box id -> the ids among `ids` (the Trace's nodes) folded into that box. owners: hidden id -> the
    id it is drawn as; titles: box id -> its title."""
    members: dict = {}
    for ident, box in owners.items():
        if box in titles and ident in ids:
            members.setdefault(box, set()).add(ident)
    return members


def fold_runs(frames: list, owners: dict, titles: dict, trace, total_steps: int | None = None) -> list:
    """`frames` (already remapped onto the drawn ids) with each run of backward frames inside one
    folded box merged into one frame. owners: hidden id -> box id; titles: box id -> its title.
    total_steps: the steps of the whole backward (by default the Trace's; a stepper knows fewer yet)."""
    runs = _runs(frames, titles)
    if not any(len(r) > 1 for r in runs):
        return frames
    graph = Graph(trace)
    members = box_members(owners, titles, graph.nodes)
    steps = {s.index: s for s in trace.steps}
    total = total_steps or len(trace.steps)
    created = FrameBuilder(trace).forward_order()      # forward frame k made created[k]

    def drawn_as(i):
        """A node as the diagram shows it: its own label, or the box it is folded into."""
        return esc(titles[owners[i]]) if owners.get(i) in titles else node_label(graph, i)
    out, overrides, marks = [], [], []       # the merged frames; what each sets beyond its frame's state
    for run in runs:
        first = frames[run[0]]
        if len(run) == 1 or first.node not in titles:
            merged = Frame(0, first.phase, first.step, first.node, labels=dict(first.labels),
                           span=first.span).with_panel_of(first)
            marks.append((run[0], run[-1], {}))
        elif first.phase == "forward":
            made = [graph.nodes[created[k]] for k in run]
            merged = Frame(0, "forward", None, first.node, span=_span(frames, run),
                           panel=partial(_forward_panel, titles[first.node], made, run[0], len(created)))
            marks.append((run[-1], run[-1], {}))
        else:
            flowing = {i for k in run for i, st in frames[k].changes.items() if st == "flowing" and i not in titles}
            labels = {}
            for k in run:
                labels.update({i: t for i, t in frames[k].labels.items() if i not in titles})
            run_steps = [steps[frames[k].step] for k in run]
            merged = Frame(0, "backward", first.step, first.node, labels=labels, span=_span(frames, run),
                           panel=partial(_panel, graph, titles[first.node], members.get(first.node, set()),
                                         run_steps, total, drawn_as))
            marks.append((run[-1], run[-1], dict.fromkeys(flowing, "flowing")))
        if len(run) > 1 and first.node in titles:
            merged.source = (run[0], run[-1])
        out.append(merged)
    _rediff(frames, out, marks)
    return out


def _span(frames: list, run: list):
    first, last = frames[run[0]].span, frames[run[-1]].span
    return (first[0], last[1]) if first and last else None


def _rediff(frames: list, out: list, marks: list) -> None:
    """Give each merged frame the changes from the one before it. marks[k] = (state_at, widths_at,
    extra): merged frame k shows the state after frames[state_at] with `extra` on top, and the widths
    after frames[widths_at]. Only the ids that changed between two merged frames are compared, so
    this is linear in the changes, not frames × ids."""
    state, widths, shown, shown_widths = {}, {}, {}, {}
    done = wdone = -1
    extra_before: dict = {}
    for k, (frame, (at, wat, extra)) in enumerate(zip(out, marks)):
        touched = {**extra_before, **extra}          # a dict: the frame's changes keep one order
        for j in range(done + 1, at + 1):
            state.update(frames[j].changes)
            touched.update(frames[j].changes)
        done = max(done, at)
        changes = {}
        for i in touched:
            now = extra.get(i, state.get(i))
            if now is not None and shown.get(i) != now:
                changes[i] = shown[i] = now
        frame.index, frame.changes = k, changes
        wtouched: dict = {}
        for j in range(wdone + 1, wat + 1):
            widths.update(frames[j].widths)
            wtouched.update(frames[j].widths)
        wdone = max(wdone, wat)
        frame.widths = {i: widths[i] for i in wtouched if shown_widths.get(i) != widths[i]}
        shown_widths.update(frame.widths)
        extra_before = extra


def _steps(n: int) -> str:
    return f"{n:,} engine step{'' if n == 1 else 's'}"


def _runs(frames: list, titles: dict) -> list:
    """Frame indices grouped: consecutive frames of one phase on the same folded box form one run."""
    runs: list = []
    for k, f in enumerate(frames):
        if runs and f.node in titles and frames[runs[-1][-1]].phase == f.phase \
                and frames[runs[-1][-1]].node == f.node:
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def _forward_panel(title: str, made: list, first: int, count: int) -> tuple:
    """(title, panel HTML, caption) for a run of forward steps that create nodes inside one folded box."""
    kinds = Counter(n.name for n in made)
    last = made[-1]
    head = f"forward {first + 1}–{first + len(made)}/{count} · {esc(title)}"
    made_text = ", ".join(f"{esc(name)} ×{n}" for name, n in kinds.most_common())
    gives = f'<div class="gv-row"><span class="gv-k">gives</span> {grids.tensor(last.value)}</div>' \
        if last.value is not None else ""
    text = (f'<div class="gv-step gv-forward gv-folded"><p class="gv-say">The forward pass runs through '
            f"<b>{esc(title)}</b>, folded into one box: autograd records {count_nodes(len(made))} ({made_text}); the "
            f"last, {esc(last.name)}, makes what leaves the box.</p>{gives}</div>")
    value = f" = {preview_text(last.value)}" if last.value is not None else ""
    return head, text, f"forward: {title}: {count_nodes(len(made))}; {last.name}{value}"


def _came_in(graph: Graph, ran: set, inside: set, before: int) -> list:
    """(edge, gradient) that reached the nodes `ran` from outside the box before step `before`, in the
    order they were sent: read from the senders' steps (found by node, not by scanning every step)."""
    found = []
    for node in ran:
        for e in graph.out_of.get(node, ()):
            if e.dst in inside:
                continue
            for s in graph.steps_of.get(e.dst, ()):
                if s.index < before:
                    found += [(s.index, k, e, grad) for k, (eid, grad, _) in enumerate(s.flows) if eid == e.id]
    return [(e, grad) for _, _, e, grad in sorted(found, key=lambda t: t[:2])]


# The .grad a folded box's panel names one by one: a box of a few layers writes a dozen, a band of 350
# blocks 4,200, which would make its one panel a megabyte; the others are counted
WROTE_SHOWN = 12


def _panel(graph: Graph, title: str, inside: set, run_steps: list, total: int, drawn_as) -> tuple:
    """(title, panel HTML, caption) for a run of engine steps inside one folded box; drawn_as names
    a node as the diagram shows it (its own label, or the box it is folded into)."""
    ran = set(s.node for s in run_steps)
    came_in = _came_in(graph, ran, inside, run_steps[0].index)
    went_out = [(graph.edges[eid], grad) for s in run_steps for eid, grad, _ in s.flows
                if graph.edges[eid].src not in inside]
    written = [acc for s in run_steps for acc in s.accumulations]
    kinds = Counter(graph.nodes[s.node].name if graph.nodes[s.node].kind != "accumulate" else "AccumulateGrad"
                    for s in run_steps)
    scale = grids.scale_of(*[g for _, g in came_in + went_out])
    first, last = run_steps[0].index + 1, run_steps[-1].index + 1
    head = f"backward {first}–{last}/{total} · {esc(title)}"
    ran_text = ", ".join(f"{esc(name)} ×{n}" for name, n in kinds.most_common())
    body = [f'<div class="gv-row">Backward runs through <b>{esc(title)}</b>, folded into one box: '
            f"{_steps(len(run_steps))} ({ran_text}), each the vector-Jacobian product of one node inside. "
            "To step through them one by one, open the box (“open box”, or the o key, where the player holds "
            "its steps) or draw the graph unfolded (max_nodes=None).</div>"]
    for label, pairs, where in (("CAME IN", came_in, "from"), ("WENT OUT", went_out, "to")):
        for e, grad in pairs:
            other = e.dst if label == "CAME IN" else e.src
            body.append(f'<div class="gv-row"><span class="gv-k">{label}</span> {where} '
                        f"{drawn_as(other)} {grids.tensor(grad, scale)}</div>")
    more = f" and {len(written) - WROTE_SHOWN:,} more" if len(written) > WROTE_SHOWN else ""
    if written:
        names = ", ".join(f"{esc(graph.nodes[a.node].name or a.node)}.grad {esc(shape(a.total.shape))}"
                          for a in written[:WROTE_SHOWN])
        body.append(f'<div class="gv-row"><span class="gv-k">WROTE</span> {names}{more}</div>')
    caption = "; ".join([f"{title}: {_steps(len(run_steps))}"] +
                        [f"→ {graph.nodes[e.src].name or e.src}: {preview_text(g)}" for e, g in went_out] +
                        [f"{graph.nodes[a.node].name or a.node}.grad = {preview_text(a.total)}"
                         for a in written[:WROTE_SHOWN]]) + more
    return head, f'<div class="gv-step gv-backward gv-folded">{"".join(body)}</div>', caption
