"""Opening a folded box in place: the box's own layout and the steps that run inside it.

A folded player shows a run of steps inside one box (a module, a chain) as one frame. To let the
learner open that box where it stands and step through its nodes one by one, the page holds, for
each box that has such a run, a second layout: the box's nodes (and the nodes right outside it that
send it gradient or receive it), unfolded. The frames inside are the unfolded animation's own frames
of that run, the first one carrying the whole state at its start, so the player folds them exactly as
it folds the outer ones: same steps, same values, same names as the unfolded player.
"""
from __future__ import annotations

import re

from ..render import Diagram, options
from ..tracing import Trace
from .folded import box_members
from .frames import Frame
from .stage import Stage


def sub_trace(trace: Trace, members: set) -> Trace:
    """The part of `trace` a box draws when opened: its members, the nodes one edge away, and the
    edges between them (the steps stay, so edges keep the axes they were summed over)."""
    near = set(members)
    for e in trace.edges:
        if (e.src in members) != (e.dst in members):
            near.update((e.src, e.dst))
    return Trace([n for n in trace.nodes if n.id in near], [e for e in trace.edges if e.src in near and e.dst in near],
                 trace.steps, [i for i in trace.forward if i in near], tuple(r for r in trace.roots if r in near),
                 trace.implicit_seed, trace.code)


# The steps a page holds inside its boxes: a run of up to RUN_STEPS steps (a module read at reading
# pace; not a folded chain of thousands) and up to PAGE_STEPS in all, backward runs first, so that a
# page costs what a learner can step through, not what the graph holds.
RUN_STEPS = 500
PAGE_STEPS = 2_000


def _chosen(runs: list) -> list:
    """The runs whose frames the page holds (in their order), within RUN_STEPS and PAGE_STEPS."""
    left, keep = PAGE_STEPS, set()
    for f in sorted(runs, key=lambda f: (f.phase != "backward", f.source)):
        size = f.source[1] - f.source[0] + 1
        if size <= min(RUN_STEPS, left):
            keep.add(id(f))
            left -= size
    return [f for f in runs if id(f) in keep]


def _names(trace: Trace, owners: dict, titles: dict, openable: dict) -> list:
    """[text, node id, box or ""] for find: every node drawn or in a box that opens; for a box that
    does not open (finding anything in it shows the box), the names its nodes hold, each once, as
    `compact` entries at the place of the box's first node, so that a page's index grows with what it
    shows, not with what its boxes hide."""
    out, closed = [], {}
    for n in trace.nodes:
        texts = dict.fromkeys(t for t in (n.name, n.tensor_name, *n.out_names) if t)
        box = owners.get(n.id, "") if owners.get(n.id) in titles else ""
        if box and box not in openable:
            if box not in closed:
                closed[box] = {}
                out.append(box)          # where the box's entries go
            closed[box].update(texts)
            continue
        out.append([" ".join(texts), n.id, box])
    return [entry for item in out for entry in (compact(closed[item], item) if isinstance(item, str) else [item])]


# A text's numbers in a compact entry's template: ASCII digits (h.7, Backward0) and subscripts (t₁₂)
_NUMBER = re.compile(r"(?<![0-9])(?:0|[1-9][0-9]*)(?![0-9])|(?<![₀-₉])(?:₀|[₁-₉][₀-₉]*)(?![₀-₉])")
_ASCII, _SUB = "\x01", "\x02"
_FROM_SUB = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_TO_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def compact(texts, box: str) -> list:
    """Find entries for the names held by the nodes folded into `box`: a name without numbers as
    [name, "", box]; names alike but for their numbers (transformer.h.0.ln_1.weight, ...h.269.ln_1...;
    t₁, t₂, ...) as one {"b": box, "t": template, "p": slot, "k": the other slots' numbers, "r":
    runs [first, count, ...] of the slot's numbers}, which `expand` (and the page) reads back."""
    groups: dict = {}
    out: list = []
    for text in texts:
        numbers = [m.group(0) for m in _NUMBER.finditer(text)]
        if not numbers or _ASCII in text or _SUB in text:
            out.append([text, "", box])
            continue
        template = _NUMBER.sub(lambda m: _SUB if m.group(0)[0] in "₀₁₂₃₄₅₆₇₈₉" else _ASCII, text)
        groups.setdefault(template, []).append(tuple(int(x.translate(_FROM_SUB)) for x in numbers))
    for template, rows in groups.items():
        slot = max(range(len(rows[0])), key=lambda k: len({r[k] for r in rows}))   # the one that varies most
        by_rest: dict = {}
        for r in rows:
            by_rest.setdefault(r[:slot] + r[slot + 1:], []).append(r[slot])
        for rest, values in by_rest.items():
            runs: list = []
            for v in values:
                if runs and v == runs[-2] + runs[-1]:
                    runs[-1] += 1
                else:
                    runs += [v, 1]
            out.append({"b": box, "t": template, "p": slot, "k": list(rest), "r": runs})
    return out


def expand(names: list) -> list:
    """`names` with every compact entry written out as [text, "", box] (what the page's find does)."""
    out = []
    for entry in names:
        if not isinstance(entry, dict):
            out.append(list(entry))
            continue
        runs = entry["r"]
        for first, count in zip(runs[::2], runs[1::2]):
            for v in range(first, first + count):
                numbers = iter([*entry["k"][:entry["p"]], v, *entry["k"][entry["p"]:]])
                text = "".join(str(next(numbers)).translate(_TO_SUB) if part == _SUB else
                               str(next(numbers)) if part == _ASCII else part
                               for part in re.split(f"([{_ASCII}{_SUB}])", entry["t"]))
                out.append([text, "", entry["b"]])
    return out


def _of(values: dict, ids) -> dict:
    """values restricted to `ids`, in the order of `ids` (read from the few ids, not the many values)."""
    return {i: values[i] for i in ids if i in values}


class Inside:
    """What a page needs to open its folded boxes: `boxes` {box id: {"svg", "mid", "title"}} and
    `frames`, the frames inside them; each folded frame that can be opened gets `inner` = (start,
    stop), its stretch of `frames`. `names`: what the page's find looks through, [text, node id, the
    box the node is folded into or ""] for every node (a parameter's name, a tensor's, an op's type).

    Which frames open where is settled at once; the boxes are laid out (Graphviz, once per box) and
    their frames made when `boxes` or `frames` is first read: by the page, not by an animation that
    is only stepped through, exported as a GIF or never shown."""

    def __init__(self, trace: Trace, raw: list, folded: list, owners: dict, titles: dict, draw_options: dict,
                 layouts: dict | None = None):
        self.members = members = box_members(owners, titles, {n.id for n in trace.nodes})   # box -> its nodes
        runs = _chosen([f for f in folded if f.source is not None and f.node in members])
        start = 0
        for f in runs:   # a run's frames inside, one per step it folds, follow the runs before it
            f.inner = (start, start + f.source[1] - f.source[0] + 1)
            start = f.inner[1]
        self.names = _names(trace, owners, titles, dict.fromkeys(f.node for f in runs))
        self._made: tuple | None = None
        self._inputs = (trace, raw, runs, members, titles, draw_options, {} if layouts is None else layouts)

    @property
    def boxes(self) -> dict:
        return self._make()[0]

    @property
    def frames(self) -> list:
        return self._make()[1]

    def _make(self) -> tuple:
        """(boxes, frames), made once."""
        if self._made is None:
            self._made = _opened(*self._inputs)
            self._inputs = None
        return self._made


def _opened(trace: Trace, raw: list, runs: list, members: dict, titles: dict, draw_options: dict,
            layouts: dict) -> tuple:
    """(boxes, frames) of an Inside: each box that opens laid out (into `layouts`, box id -> its Stage,
    kept by a caller that asks again), and the frames inside the boxes, in the order of `runs`."""
    drawn, boxes = {}, {}
    for box in dict.fromkeys(f.node for f in runs):
        if box not in layouts:
            opts = {**draw_options, "max_nodes": None, "collapse": False}
            layouts[box] = Stage(Diagram(sub_trace(trace, members[box]), options(**opts)).svg())
        drawn[box], boxes[box] = layouts[box], {"svg": layouts[box].svg, "title": titles[box]}
    frames: list = []
    state, widths, done = {}, {}, -1
    for f in runs:
        first, last = f.source
        for k in range(done + 1, first):
            state.update(raw[k].changes)
            widths.update(raw[k].widths)
        shown = drawn[f.node].kinds
        for k in range(first, last + 1):
            state.update(raw[k].changes)
            widths.update(raw[k].widths)
            # the first frame inside carries the whole state there (of what the box draws); the
            # others what changed
            changes, wide = ((raw[k].changes, raw[k].widths) if k > first
                             else (_of(state, shown), _of(widths, shown)))
            frames.append(Frame(len(frames), raw[k].phase, raw[k].step, raw[k].node,
                                {i: s for i, s in changes.items() if i in shown},
                                {i: t for i, t in raw[k].labels.items() if i in shown},
                                widths={i: w for i, w in wide.items() if i in shown},
                                span=raw[k].span).with_panel_of(raw[k]))
        done = last
    for box, stage in drawn.items():
        lengths: dict = {}
        for f in runs:
            if f.node == box:
                for inner in frames[f.inner[0]:f.inner[1]]:
                    for k, text in inner.labels.items():
                        lengths[k] = max(lengths.get(k, 0), len(text))
        boxes[box]["mid"] = {k: [round(x, 1), round(y, 1), 1 if left else 0]
                             for k, (x, y, left) in stage.place(lengths, only=lengths).items()}
    return boxes, frames
