"""Escaping of user-given text (tensor names, scope names) for DOT labels.

Names come from user code and may hold quotes, `<`, `&`, braces, bars, backslashes,
newlines or a `<script>` tag; each must be drawn as the text it is, never parsed
as DOT syntax, as a record field separator, or as SVG markup (Graphviz escapes
`<` and `&` itself when it writes SVG).

Labels are plain escStrings and record labels, never HTML-like labels: the
WebAssembly Graphviz is built without expat and would draw an HTML label as the
bare node name. A label passes three parsers, and each escape here answers one:
the DOT lexer (`\\"`), the record parser (`\\{ \\} \\| \\< \\>` and `\\ ` for a
space that must not collapse), and the label formatter (`\\\\` so `\\N` or `\\l` in
a name is not a substitution or a line break).
"""
from __future__ import annotations

import re

import graphviz

_RECORD_SPECIAL = set("{}|<>")


_CONTROL = re.compile("[\x00-\x09\x0b-\x1f]")   # the control characters _clean changes (all but \n)
# what record_text escapes: its specials, a line break, and a space that is leading or repeated
_RECORD_ESCAPED = re.compile(r'[\\"{}|<>\n]|  |^ ')


def _clean(text: object) -> str:
    # XML 1.0 cannot carry most control characters; tabs and carriage returns read as spaces
    text = str(text)
    if _CONTROL.search(text) is None:   # most text: nothing to change
        return text
    return "".join(" " if ch in "\t\r" else ch for ch in text if ch in "\t\r\n" or ord(ch) >= 32)


def dot_text(text: object, newline: str = "\\n") -> str:
    """A plain DOT label: backslashes, quotes and newlines escaped.

    Returns graphviz's NoHtml string, so a name that looks like `<...>` is quoted as
    a string rather than taken for an HTML label. `newline` is the line break used
    ("\\n" centred, "\\l" left-aligned)."""
    s = _clean(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", newline)
    return graphviz.nohtml(s)


def record_text(text: object, newline: str = "\\n") -> str:
    """Text for one field of a record label: dot_text plus the record parser's specials.
    Repeated and leading spaces become hard spaces, so the columns of an array stay aligned."""
    text = _clean(text)
    if _RECORD_ESCAPED.search(text) is None:   # most lines: nothing to escape
        return text
    out = []
    previous = "\n"
    for ch in text:
        if ch == " " and previous in " \n":
            out.append("\\ ")    # the record parser collapses runs of spaces and drops leading ones
        elif ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch in _RECORD_SPECIAL:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append(newline)
        else:
            out.append(ch)
        previous = ch
    return "".join(out)


def lines(*parts: str, align: str = "center") -> str:
    """Already-escaped lines joined with Graphviz line breaks (centred or left-aligned);
    a left-aligned block ends with a break too, or its last line would be centred."""
    if align == "left":
        return "".join(p + "\\l" for p in parts)
    return "\\n".join(parts)
