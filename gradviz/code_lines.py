"""Source tracking: the line of user code that made each node or leaf (file, line number,
text), and the block of code around those lines that a Trace keeps.

Off in plain scripts (the frame walk costs about a microsecond per op); on by default in a
notebook kernel and in `gradviz render|animate`. The line is kept beside the node, so a
graph drawn after the forward ran still knows which line made each node.
"""
from __future__ import annotations

import linecache
import os
import sys
import weakref

tracking_sources = False
_sources: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def set_source_tracking(enabled: bool) -> None:
    """Record the line of user code that creates each node (file, line number, text)."""
    global tracking_sources
    tracking_sources = bool(enabled)


def source_tracking() -> bool:
    return tracking_sources


def remember_source(node, skip: int = 1) -> None:
    """Keep the user line that is creating `node` (called by the op that creates it)."""
    found = user_source(skip + 1)
    if found is not None:
        _sources[node] = found


# Leaves by id: a tensor compares elementwise, so it cannot be a WeakKeyDictionary key; the weak
# reference's callback drops the entry when the tensor goes.
_leaf_sources: dict = {}


def remember_leaf_source(tensor, skip: int = 1) -> None:
    """Keep the user line that made `tensor` a leaf that requires grad (the first such line)."""
    key = id(tensor)
    entry = _leaf_sources.get(key)
    if entry is not None and entry[0]() is tensor:
        return
    found = user_source(skip + 1)
    if found is not None:
        _leaf_sources[key] = (weakref.ref(tensor, lambda _, key=key: _leaf_sources.pop(key, None)), found)


def leaf_source_of(tensor) -> tuple | None:
    """(file, line, text) of the user code that made a leaf tensor require grad, when it was recorded."""
    entry = _leaf_sources.get(id(tensor))
    return entry[1] if entry is not None and entry[0]() is tensor else None


def source_of(node) -> tuple | None:
    """(file, line, text) of the user code that created `node`, when it was recorded."""
    return _sources.get(node)


def in_notebook() -> bool:
    """True inside a Jupyter kernel (JupyterLab, Notebook, VS Code, Colab)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return type(shell).__name__ in ("ZMQInteractiveShell", "Shell")


def code_around(sources) -> dict:
    """{file: (first line, [lines])}: the block of each file from the first to the last line
    that made a node, read now (IPython keeps each cell's text in linecache)."""
    spans: dict = {}
    for file, line, _ in sources:
        lo, hi = spans.get(file, (line, line))
        spans[file] = (min(lo, line), max(hi, line))
    code = {}
    for file, (lo, hi) in spans.items():
        lines = [linecache.getline(file, k).rstrip("\n") for k in range(lo, hi + 1)]
        if any(lines):
            code[file] = (lo, lines)
    return code


def user_source(skip: int = 1, outside: tuple = (PACKAGE_DIR,)) -> tuple | None:
    """(file, line, text) of the innermost frame outside gradviz (and the other package folders
    `outside` names, each ending in a separator), or None."""
    frame = sys._getframe(skip)
    while frame is not None and frame.f_code.co_filename.startswith(outside):
        frame = frame.f_back
    if frame is None:
        return None
    filename, line = frame.f_code.co_filename, frame.f_lineno
    return filename, line, linecache.getline(filename, line).strip()
