"""Diagram: one drawn trace, shown inline in notebooks and saved as SVG, PNG, PDF or DOT."""
from __future__ import annotations

import os
from pathlib import Path

from ..tracing import Trace
from . import backends
from .collapse import View, plan
from .dot import DrawOptions, to_digraph

FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}


class Diagram:
    """The diagram of a Trace. `.source` is the DOT text; `.svg()` lays it out (once)."""

    def __init__(self, trace: Trace, opts: DrawOptions | None = None):
        self.trace = trace
        self.options = opts or DrawOptions()
        self.view: View = plan(trace, self.options.max_nodes, self.options.collapse)
        self.digraph = to_digraph(trace, self.options, self.view)
        self.source: str = self.digraph.source
        self._svg: str | None = None

    def svg(self) -> str:
        """The laid-out diagram as an SVG document (a string)."""
        if self._svg is None:
            self._svg = backends.render_svg(self.source)
        return self._svg

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

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"image/svg+xml": self.svg(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        hidden = f", {self.view.hidden} hidden" if self.view.hidden else ""
        return f"<gradviz.Diagram: {len(self.view.nodes) + len(self.view.groups)} nodes, " \
               f"{len(self.view.edges)} edges{hidden}>"
