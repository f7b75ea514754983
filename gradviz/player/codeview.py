"""The learner's code beside the graph: a listing of the lines that built it.

Each Trace node may carry `source = (file, line, text)`, the line of user code that
created it, and the Trace may carry `code = {file: (first_line, lines)}`, the block
around those lines as it was when the graph was recorded. The listing shows that
block (or, without it, just the recorded lines, with ⋮ where lines were skipped);
every line gets a key "k:line" that the player highlights when the node it made is
active, in forward and in backward (a folded box: the lines that made its nodes).
"""
from __future__ import annotations

from ..render.labels import file_name as _display_name
from .mathtext import esc


def _blocks(trace) -> list:
    """[(file, [(line number, text)])] in the order files first appear among the nodes."""
    files: dict = {}
    for node in trace.nodes:
        if node.source is not None:
            file, line, text = node.source
            files.setdefault(file, {})[int(line)] = text
    code = getattr(trace, "code", None) or {}
    blocks = []
    for file, recorded in files.items():
        if file in code:
            first, lines = code[file]
            numbered = list(enumerate(lines, start=int(first)))
        else:
            numbered = sorted(recorded.items())
        blocks.append((file, numbered))
    return blocks


def line_keys(trace, boxes: dict | None = None) -> dict:
    """node id -> the key of the line that created it (only nodes with a source); with `boxes` (a
    folded box's id -> the ids of the nodes folded into it), each box -> the key of the line that made
    its ops (its leaves' where it folds no op with a line), or the list of them in the listing's
    order where several lines did."""
    order = {file: k for k, (file, _) in enumerate(_blocks(trace))}
    keys = {n.id: f"{order[n.source[0]]}:{int(n.source[1])}" for n in trace.nodes if n.source is not None}
    ops = {n.id for n in trace.nodes if n.kind == "op"}
    for box, members in (boxes or {}).items():
        made = {keys[i] for i in members & ops if i in keys} or {keys[i] for i in members if i in keys}
        made = sorted(made, key=lambda k: tuple(map(int, k.split(":"))))
        if made:
            keys[box] = made[0] if len(made) == 1 else made
    return keys


def listing(trace) -> str:
    """The code listing as HTML ('' when no node recorded its source)."""
    blocks = _blocks(trace)
    if not blocks:
        return ""
    used = set(line_keys(trace).values())
    out = ['<div class="gv-code" aria-label="your code">']
    for k, (file, numbered) in enumerate(blocks):
        out.append(f'<div class="gv-file">{esc(_display_name(file))}</div><pre>')
        previous = None
        for number, text in numbered:
            if previous is not None and number != previous + 1:
                out.append('<span class="gv-gap">⋮</span>')
            key = f"{k}:{number}"
            made = " gv-made" if key in used else ""
            out.append(f'<span class="gv-line{made}" data-line="{key}"><span class="gv-ln">{number}</span>'
                       f"{esc(text.rstrip())}</span>")
            previous = number
        out.append("</pre>")
    out.append("</div>")
    return "".join(out)
