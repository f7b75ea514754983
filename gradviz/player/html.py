"""Animation: a recorded backward (and forward) as a self-contained HTML player.

`animate()` records, lays the graph out once with the renderer, builds the frames
and returns an Animation. `.save("x.html")` writes ONE file: the inline SVG, the
stylesheet, the frames as JSON and a small script (assets/player.js), with no
network access. `_repr_html_` is the same player as a fragment, so it plays in a
notebook without a kernel (nbviewer, a blog). `.save("x.gif")` is in gif.py.
"""
from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path

from ..bulk import bulk
from ..origins import check_tensors, flat, is_trace, record
from ..progress import progress, ticking
from ..tracing import Trace
from . import codeview, predict
from .frames import Frame, FrameBuilder, state_at
from .folded import fold_runs
from .inside import Inside
from .mathtext import esc
from .orders import separate_orders
from .pack import pack
from .stage import Stage
from ..render import Diagram, options
from .gif import save_gif
from .front_end import script, stylesheet

_uids = itertools.count()

# When several hidden nodes share one placeholder, the placeholder shows the liveliest state.
_PRIORITY = {"active": 7, "flowing": 6, "written": 5, "new": 4, "pending": 3, "done": 2, "built": 2,
             "waiting": 1, "idle": 1, "hidden": 0}


def script_json(data) -> str:
    """JSON safe inside <script>: no '</script>', '<script' or '<!--' can end or confuse the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    # "<script" could open an element inside the data in some parsers' eyes; "<!" a comment
    return re.sub(r"<(?=[!sS])", r"\\u003c", text.replace("</", "<\\/"))


def scalable(svg: str) -> str:
    """The SVG without its fixed width and height: its viewBox scales it to the player's viewport."""
    head_end = svg.find(">")
    head = re.sub(r'\s(?:width|height)="[^"]*"', "", svg[:head_end])
    return head + svg[head_end:]


_KEY = re.compile(r'<span class="gv-key" title="[^"]*">[^<]*</span>')


def with_key(markup: str, key: tuple) -> str:
    """The player's markup with another legend (text, tooltip) in place of backward's."""
    return _KEY.sub(lambda _: f'<span class="gv-key" title="{esc(key[1])}">{esc(key[0])}</span>', markup, count=1)


def markup(uid: str, svg: str, n: int, title: str, text: str, page: bool = False, code: str = "") -> str:
    """The player's elements, its outer box left open (the caller adds its data and script, then
    '</div>'): the diagram's viewport, the controls, the camera buttons and the step panel."""
    return (
        f'<div class="gv-root gv-player{" gv-page" if page else ""}" id="{uid}" data-frame="0">'
        f"<style>{stylesheet()}</style>"
        '<div class="gv-frame">'
        '<div class="gv-stage" role="img" aria-label="the backward graph: drag to pan, wheel or pinch to zoom, '
        # with script, the drawing's text waits until the player knows its scale: the browser then
        # never lays out a big graph's text while it is still reading the page (without script: shown)
        f'double-click a node to focus it"><script>document.currentScript.parentNode.classList.add("gv-far")</script>'
        f'{scalable(svg)}</div>'
        '<div class="gv-bar" role="toolbar" aria-label="steps">'
        '<button type="button" class="gv-prev" title="Previous step (←)">◀ Prev</button>'
        '<button type="button" class="gv-next" title="Next step (→)">Next ▶</button>'
        '<button type="button" class="gv-play" title="Play / pause (space)">▶ Play</button>'
        '<button type="button" class="gv-reset" title="Back to the start (Home)">Reset</button>'
        '<button type="button" class="gv-open" aria-pressed="false" hidden>open box</button>'
        f'<input type="range" class="gv-slider" min="0" max="{max(n - 1, 0)}" value="0" step="1" aria-label="step">'
        f'<span class="gv-count" aria-hidden="true">step {1 if n else 0} of {n}</span>'
        '<label>speed <select class="gv-speed" aria-label="speed">'
        '<option value="0.5">0.5×</option><option value="1" selected>1×</option>'
        '<option value="2">2×</option><option value="4">4×</option></select></label>'
        "</div>"
        '<div class="gv-cam" role="toolbar" aria-label="camera">view'
        '<button type="button" class="gv-zoom-out" title="Zoom out" aria-label="zoom out">−</button>'
        '<button type="button" class="gv-zoom-in" title="Zoom in" aria-label="zoom in">+</button>'
        '<button type="button" class="gv-fit" title="Show the whole graph">fit</button>'
        '<button type="button" class="gv-follow" aria-pressed="true" '
        'title="Follow the running node again">follow</button>'
        '<input type="search" class="gv-find" placeholder="find (/)" aria-label="find a parameter, tensor or node type" '
        'title="Find a parameter, a tensor\'s name or a node type (/): Enter for the next, Shift+Enter the one before">'
        '<span class="gv-found" aria-live="polite"></span>'
        '<span class="gv-key" title="From the first backward step on, arrowheads point the way the gradient '
        'flows (to the input). An edge that has carried gradient is drawn one step thicker for every factor of '
        '10 in its largest |entry|: below 0.001, 0.001, 0.01, 0.1, 1, 10 and up; a hairline when it is all '
        'zero.">backward: arrows point the way the gradient flows · arrow thickness: size of the gradient, '
        '×10 per step</span></div>'
        f'<div class="gv-codebox">{code}</div>'
        '<div class="gv-panel">'
        f'<div class="gv-title">{title}</div>'
        f'<div class="gv-text">{text}</div><div class="gv-now"></div></div>'
        '<div class="gv-live gv-sr" aria-live="polite"></div>'
        "</div>"
    )


def layout(trace: Trace, draw_options: dict) -> tuple:
    """Lay the trace out once with the renderer; returns (svg, the hidden-id -> placeholder map,
    placeholder id -> its title)."""
    # the panel and the edges show gradients as they are computed; a static "grad" column on
    # the nodes would show the state before the run for the whole animation
    draw_options.setdefault("show_grads", False)
    # the output on top and the leaves at the bottom: backward, the thing being watched, reads
    # down the page like text, and the camera follows it downwards
    draw_options.setdefault("rankdir", "BT")
    diagram = Diagram(trace, options(**draw_options))   # plans what to draw once, for the SVG and the map
    return (diagram.svg(), {**diagram.view.owner, **diagram.view.edge_owner},
            {g.id: g.title for g in diagram.view.groups})


def remap(frames: list, owners: dict) -> None:
    """Point the changes and labels of ids the diagram folded away at the ids that draw them."""
    if not owners:
        return
    for frame in frames:
        changes: dict = {}
        for ident, st in frame.changes.items():
            target = owners.get(ident, ident)
            if target == ident or _PRIORITY.get(st, 0) >= _PRIORITY.get(changes.get(target), -1):
                changes[target] = st
        frame.changes = changes
        frame.labels = {owners.get(k, k): v for k, v in frame.labels.items()}
        widths: dict = {}
        for ident, level in frame.widths.items():   # a merged edge is as thick as its thickest member
            target = owners.get(ident, ident)
            widths[target] = max(level, widths.get(target, level))
        frame.widths = widths
        if frame.node in owners:
            frame.node = owners[frame.node]


class Animation:
    """A recorded run: `.steps` (the trace's backward steps), `.frames`, `.save(path)`."""

    def __init__(self, trace: Trace, frames: list, svg: str, interval_ms: int = 1200, title: str = "gradviz",
                 draw_options: dict | None = None, inside: Inside | None = None):
        self.trace = trace
        self.draw_options = dict(draw_options or {})   # what the SVG was drawn with (the GIF redraws alike)
        self.frames: list[Frame] = frames
        self.stage = Stage(svg)
        self.interval_ms = int(interval_ms)
        self.title = title
        self.inside = inside     # the folded boxes the page can open, and the frames inside them

    @property
    def steps(self) -> list:
        return self.trace.steps

    @property
    def svg(self) -> str:
        return self.stage.svg

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        forward = sum(f.phase == "forward" for f in self.frames)
        return (f"<gradviz.Animation: {len(self.frames)} frames ({forward} forward, "
                f"{len(self.frames) - forward} backward) over {len(self.trace.nodes)} nodes>")

    def state(self, index: int) -> dict:
        """The id -> state map the diagram shows at frame `index`."""
        return state_at(self.frames, index)

    def data(self) -> dict:
        """What the player script reads (its keys: player/frames.py's docstring)."""
        lengths: dict = {}
        for f in self.frames:       # each edge's label goes where its longest text is clear of the nodes
            for k, text in f.labels.items():
                lengths[k] = max(lengths.get(k, 0), len(text))
        mid = {k: [round(x, 1), round(y, 1), 1 if left else 0]
               for k, (x, y, left) in self.stage.place(lengths).items()}
        forward = max((f.span[1] for f in self.frames if f.phase == "forward" and f.span), default=0)
        boxes = self.inside.members if self.inside is not None else None
        data = {"frames": pack([f.to_json() for f in progress(self.frames, "panels")]), "mid": mid,
                "interval": self.interval_ms, "lines": codeview.line_keys(self.trace, boxes),
                "steps": [forward, len(self.trace.steps)]}
        if any(f.phase == "backward" for f in self.frames):
            shown = self.frames + (self.inside.frames if self.inside is not None else [])
            one_by_one = {f.span[0] for f in shown if f.phase == "backward" and f.span and f.span[0] == f.span[1]}
            data["predict"] = predict.payload(self.trace, one_by_one)   # what each step sent: predict mode's answers
            data["rtol"], data["atol"] = predict.RTOL, predict.ATOL
        if self.inside is not None:
            data["names"] = self.inside.names
            if self.inside.boxes:
                data["boxes"] = self.inside.boxes
                data["inner"] = pack([f.to_json() for f in progress(self.inside.frames, "panels in boxes")])
        return data

    def fragment(self, page: bool = False) -> str:
        """The player as an HTML fragment: it styles and scripts itself, so it works inside any page."""
        uid = f"gv-player-{os.getpid()}-{next(_uids)}"
        first = self.frames[0] if self.frames else None
        # frame 0 drawn server-side: readers that strip scripts (GitHub previews) still see a diagram
        svg = self.stage.render(self.state(0), first.labels) if first else self.stage.svg
        return (
            markup(uid, svg, len(self.frames), first.title if first else "", first.text if first else "", page=page,
                   code=codeview.listing(self.trace))
            + f'<script type="application/json" class="gv-data">{script_json(self.data())}</script>'
            f"<script>{script()}\n"
            "(function(s){var r=s&&s.closest?s.closest('.gv-player'):"
            f"document.getElementById('{uid}');window.gradvizPlayer(r);window.gradvizPredict(r);}})"
            "(document.currentScript);</script>"
            "</div>"
        )

    def html(self) -> str:
        """A whole HTML document holding the player (no external resource of any kind)."""
        return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                '<meta name="viewport" content="width=device-width, initial-scale=1">'
                f"<title>{esc(self.title)}</title><style>body{{margin:8px}}</style></head>"
                f"<body>{self.fragment(page=True)}</body></html>\n")

    def _repr_html_(self) -> str:
        return self.fragment()

    def save(self, path: str | os.PathLike, **options) -> Path:
        """Write the animation: .html/.htm (the player) or .gif (needs Pillow and Graphviz's dot)."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix in (".html", ".htm"):
            path.write_text(self.html(), encoding="utf-8")
            return path
        if suffix == ".gif":
            return save_gif(self, path, **options)
        raise ValueError(f"cannot tell the format of {str(path)!r}: save an Animation as .html or .gif")


def _roots(tensors, who: str) -> tuple:
    tensors = flat(tensors)
    if not tensors:
        raise TypeError(f"{who}() needs at least one tensor to run backward from")
    check_tensors(tensors, who)
    for i, t in enumerate(tensors):
        if not getattr(t, "requires_grad", False):
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    return tensors


def record_graph(tensors, names, draw_options: dict, jacobians: bool = False, who: str = "animate",
                 **recording) -> tuple:
    """(recording, svg, owners, titles): the Recording of a backward over `tensors` (gradviz or torch
    tensors, or a recorded Trace; `recording` holds record()'s other options), its graph laid out before
    any step runs, so the diagram shows .grad as it was when the animation starts; steps are appended
    to its Trace. `who`: the function a refusal names (animate, step)."""
    run = record(*(tensors if is_trace(tensors) else _roots(tensors, who)), names=names, jacobians=jacobians,
                 show_saved=draw_options.get("show_saved", False), **recording)
    separate_orders(run.trace)   # a create_graph gradient's own graph, boxed apart
    svg, owners, titles = layout(run.trace, draw_options)
    return run, svg, owners, titles


def _run(run) -> Trace:
    """The recording run to its end with a progress bar (a long backward shows it, counting the steps as
    they run; torch's engine is never paused for it), then closed: interrupted or not, every .grad is
    put back as it was."""
    try:
        with ticking("backward", sum(n.kind in ("op", "accumulate") for n in run.trace.nodes)) as tick:
            run.run(tick)
    finally:
        run.close()
    return run.trace


@bulk
def animate(*tensors, gradient=None, names=None, model=None, forward: bool = True, retain_graph: bool = True,
            jacobians: bool = True, interval_ms: int = 1200, title: str = "gradviz: backward, step by step",
            unroll: bool = False, inputs=None, **draw_options) -> Animation:
    """Record the graph behind `tensors` and a backward run over it, and return an Animation.

    `tensors`: gradviz tensors, real torch tensors (torch's own backward, through the torch bridge),
    or one recorded Trace with its steps, animated as is.

    gradient: the `gradient` of `tensor.backward(gradient)` (needed for non-scalar outputs). inputs: as
    `tensor.backward(inputs=...)`: only the nodes that lead to them run, and only they get a gradient.
    names: {name: tensor} for the diagram and the panel (leaves or intermediates); by default the
    calling code's variable names, where a tensor has exactly one. model: a Module whose parameter
    names label the leaves (`animate(loss, model=model)`). forward: start with frames in which
    the graph grows op by op, in the order the code created it. retain_graph: keep the graph
    (the default) so the caller can backward again and local Jacobians can be shown.
    jacobians: show each step's local Jacobian (for tensors of up to 64 elements). unroll: a torch
    LSTM's fused node recorded cell by cell and step by step (see `record`).
    Other keyword arguments are drawing options of `gradviz.draw` (rankdir, theme, ...).
    The backward really runs, and afterwards every .grad is put back as it was: recording
    changes nothing the user can see, so `animate(loss)` then `loss.backward()` gives the
    plain gradient.
    """
    if is_trace(tensors):   # an already recorded run, drawn as it is
        trace = tensors[0]
        svg, owners, titles = layout(trace, draw_options)
    else:
        # eager: every value is shown, so each gradient is read as torch's hook hands it over
        run, svg, owners, titles = record_graph(tensors, names, draw_options, jacobians, gradient=gradient,
                                                model=model, retain_graph=retain_graph, unroll=unroll, eager=True,
                                                inputs=inputs)
        trace = _run(run)   # recording changes no .grad the user can see
    frames = FrameBuilder(trace, jacobians).build(forward)
    raw = [f.copy() for f in frames]                    # as the unfolded player shows them, for opening a box
    remap(frames, owners)
    frames = fold_runs(frames, owners, titles, trace)   # backward through a folded box: one frame per run
    return Animation(trace, frames, svg, interval_ms, title, draw_options,
                     Inside(trace, raw, frames, owners, titles, draw_options))
