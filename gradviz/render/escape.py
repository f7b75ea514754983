"""Escaping of user-given text (tensor names, scope names) for DOT and HTML-like labels.

Names come from user code and may hold quotes, `<`, `&`, braces, backslashes,
newlines or a `<script>` tag; every one of them must be drawn as the text it is,
never parsed as DOT syntax, as a Graphviz HTML label, or as SVG markup.
"""
from __future__ import annotations

import graphviz

_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def html_text(text: object) -> str:
    """Text for the inside of a Graphviz HTML-like label; newlines become line breaks.

    Graphviz turns the entities back into characters and SVG output escapes them
    again, so `<script>` arrives in the SVG as `&lt;script&gt;`: text, not markup.
    Control characters other than newline are dropped: XML 1.0 cannot carry them.
    """
    out = []
    for ch in str(text):
        if ch in _HTML:
            out.append(_HTML[ch])
        elif ch == "\n":
            out.append('<BR ALIGN="LEFT"/>')
        elif ch in "\r\t":
            out.append(" ")
        elif ord(ch) < 32 or ch in "\ufffe\uffff":
            continue
        else:
            out.append(ch)
    return "".join(out)


def dot_text(text: object) -> str:
    """A plain (non-HTML) DOT label: backslashes, quotes and newlines escaped.

    Returns graphviz's NoHtml string, so a name that happens to look like `<...>`
    is quoted as a string rather than taken for an HTML label. Backslashes are
    doubled so that `\\N`, `\\G` or `\\l` in a name are not label escapes.
    """
    s = "".join(ch for ch in str(text) if ch == "\n" or ord(ch) >= 32)
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return graphviz.nohtml(s)


def html_label(inner: str) -> str:
    """Wrap already-escaped HTML-label markup as a DOT HTML string."""
    return f"<{inner}>"
