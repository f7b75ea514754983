"""Diagram: one drawn trace, shown inline in notebooks and saved as SVG, PNG, PDF or DOT.

Inline (`_repr_html_`) the SVG takes the width it is given (up to 1.6× its drawn size) but never
shrinks below its drawn size, where its text is 10 CSS px: a tall drawing is shown whole, as tall as
it is (the page scrolls it), and one too wide for that opens on its start, with the player's camera:
drag to pan, ctrl+wheel or pinch to zoom, double-click to fit; drawn with the
default theme it follows the page's light or dark scheme through the theme's CSS variables.
Saved, it is Graphviz's plain SVG.
"""
from __future__ import annotations

import html
import itertools
import os
import re
from functools import lru_cache
from pathlib import Path

from ..bulk import bulk
from ..tracing import Trace
from . import backends, labels
from .collapse import View
from .dot import DrawOptions, label_context, plan_for, to_digraph
from .theme import css, resolve_theme

FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}
# the front end's files (the camera and the stylesheet) live with the player, which draws with them too;
# they are read as files, so render imports nothing from the player
FRONT_END = Path(__file__).resolve().parents[1] / "player" / "assets"
_ids = itertools.count()
_SIZE = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')
_NODE_TITLE = re.compile(r'(<g\b[^>]*\bid="(?P<id>[^"]+)"[^>]*\bclass="node[^"]*"[^>]*>\s*<title>)[^<]*(</title>)')


@lru_cache(maxsize=None)
def _front_end(name: str) -> str:
    return (FRONT_END / name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def camera_script() -> str:
    """The camera (camera.js) and the pan/zoom library it drives (panzoom, vendored, MIT). panzoom is
    run as a CommonJS module, so it neither needs nor touches a page's AMD loader or its own
    window.panzoom; the camera finds it as window.gradvizPanzoom."""
    return ("(function(){var module={exports:{}},exports=module.exports,define;\n" + _front_end("panzoom.min.js")
            + "\n;if(!window.gradvizPanzoom)window.gradvizPanzoom=module.exports;})();\n" + _front_end("camera.js"))


class Diagram:
    """The diagram of a Trace. `.source` is the DOT text; `.svg()` lays it out (once)."""

    @bulk
    def __init__(self, trace: Trace, opts: DrawOptions | None = None):
        self.trace = trace
        self.options = opts or DrawOptions()
        ctx = label_context(trace, self.options, resolve_theme(self.options.theme))   # one for sizing and drawing
        self.view: View = plan_for(trace, self.options, ctx)
        self.digraph = to_digraph(trace, self.options, self.view, ctx)
        self.source: str = self.digraph.source
        self._svg: str | None = None

    def svg(self) -> str:
        """The laid-out diagram as an SVG document (a string)."""
        if self._svg is None:
            self._svg = self._with_tooltips(backends.render_svg(self.source))
        return self._svg

    def _with_tooltips(self, svg: str) -> str:
        """Each node's <title> (what a browser shows on hover) says what the node is and, with source
        tracking on, the file:line and code that made it; Graphviz's own `tooltip=` would wrap the
        node's shapes in an <a>, which the player's styles and the stage do not expect."""
        index = {n.id: n for n in self.trace.nodes}

        def put(m):
            node = index.get(m.group("id"))
            if node is None:
                return m.group(0)
            return m.group(1) + html.escape(labels.tooltip(node)) + m.group(3)
        return _NODE_TITLE.sub(put, svg)

    def pipe(self, format: str = "svg") -> bytes:
        if format == "svg":
            return self.svg().encode("utf-8")
        if format == "dot":
            return self.source.encode("utf-8")
        return backends.render(self.source, format)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the diagram; the extension picks the format (.svg .png .pdf .dot)."""
        path = Path(path)
        fmt = FORMATS.get(path.suffix.lower())
        if fmt is None:
            raise ValueError(f"cannot tell the format of {str(path)!r}: use one of {', '.join(FORMATS)}")
        data = self.pipe(fmt)   # render before touching the file, so a failure leaves nothing behind
        path.write_bytes(data)
        return path

    # -- notebooks: inline SVG (JupyterLab, VS Code, Colab) -------------------------------------
    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_html_(self) -> str:
        """The diagram inline: fitted to the container's width, with pan and zoom (see the module)."""
        svg = self.svg()
        start = svg.find("<svg")
        head_end = svg.find(">", start)
        head = re.sub(r'\s(?:width|height)="[^"]*"', "", svg[start:head_end])
        size = _SIZE.search(head)
        w, h = (float(size.group(1)), float(size.group(2))) if size else (400.0, 300.0)
        body = re.sub(r"<!--.*?-->", "", head + svg[head_end:], flags=re.S)
        uid = f"gv-diagram-{os.getpid()}-{next(_ids)}"
        # the theme's variables only for the default theme: a chosen theme keeps its own colours
        style = f"<style>{css()}{_front_end('player.css')}</style>" if self.options.theme is None else ""
        return (
            f'<div class="gv-root gv-diagram" id="{uid}">{style}'
            f'<div class="gv-stage" style="position:relative;overflow:hidden;touch-action:none;'
            f'width:min(100%,{w:.0f}px);aspect-ratio:{w:.0f}/{h:.0f}">{body}</div>'
            '<div class="gv-hint">drag to pan · ctrl+wheel or pinch to zoom · double-click to fit</div>'
            f"<script>{camera_script()}\n(function(){{var r=document.getElementById('{uid}');"
            "window.gradvizDiagram(r);})();</script></div>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self._repr_html_(), "image/svg+xml": self.svg(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        boxes = len(self.view.groups)
        hidden = f", {self.view.hidden:,} hidden in {boxes} box{'es' if boxes != 1 else ''}" if self.view.hidden else ""
        if self.view.fitted:
            hidden += " (folded to fit a few screens; max_nodes=None or collapse=False draws every node)"
        return f"<gradviz.Diagram: {len(self.view.nodes) + len(self.view.groups)} nodes, " \
               f"{len(self.view.edges)} edges{hidden}>"
