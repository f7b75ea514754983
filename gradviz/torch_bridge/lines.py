"""The line of the learner's code that made each torch node, for the code panel and the tooltips.

torch keeps no such line unless anomaly mode is on. So while a forward is watched (`record_forward`,
and `gradviz render|animate` on a torch script: `LineWatch`), each new node is given the innermost
line outside torch and gradviz, kept in the node's own `metadata` dict, where anomaly mode keeps its
traceback: it lives and goes with the node, and any later view of the graph reads it. A node made
while anomaly mode was on (`torch.autograd.set_detect_anomaly(True)`) and never watched gets the last
such line of that traceback.
"""
from __future__ import annotations

import os
import re
import threading
import weakref
from functools import lru_cache

from ..code_lines import PACKAGE_DIR, user_source
from . import numbers
from .support import is_accumulate, sequence_nr, torch_module

KEY = "gradviz_line"   # node.metadata[KEY] = (file, line, text)
# id(leaf) -> (a weak reference to it, its line): the line that made a tensor a leaf requiring grad, as a
# watch saw it (a tensor has no node to keep it; a weak-keyed dict would compare tensors with ==)
_LEAF_LINES: dict = {}
_FRAME = re.compile(r'\s*File "(?P<file>.*)", line (?P<line>\d+), in [^\n]*\n(?:\s*(?P<text>[^\n]*))?')


@lru_cache(maxsize=1)
def _outside() -> tuple:
    """The folders whose frames are not the learner's: gradviz's and torch's, and the code torch.fx
    generates (a compiled model's graph runs as `<eval_with_key>.N`)."""
    return PACKAGE_DIR, os.path.dirname(os.path.abspath(torch_module().__file__)) + os.sep, "<eval_with_key>"


@lru_cache(maxsize=1)
def _tensor_class():
    return torch_module().Tensor


def learner_line(skip: int = 1) -> tuple | None:
    """(file, line, text) of the innermost frame outside torch and gradviz: for an op in a Module's
    forward its line there, for a torch Module called from the learner's code the line calling it."""
    return user_source(skip + 1, _outside())


def compiling() -> bool:
    """True while torch.compile traces the code a watch is running in: the watch then only calls
    through (what it would read is not there to read while tracing, and dynamo warns of each call it
    cannot trace; the compiled graph's nodes get no line)."""
    return torch_module().compiler.is_compiling()


def next_number() -> int:
    """The sequence number torch gives the next node this thread makes: taken before a call, it
    tells the nodes the call made (theirs are at least this) from older ones."""
    return torch_module()._C._autograd._get_sequence_nr()


def claim(result, start: int, line_for=learner_line) -> None:
    """Give the nodes of `result` (a tensor, or a tuple or list of them) that one call made since
    the sequence number `start` the line `line_for()` says (the learner's line now), and the nodes
    behind them made since then too (what a composite call made that it did not return). An older
    node with no line was made where no watch saw it (a custom autograd.Function's apply, before the
    watch began): it keeps none, rather than the line of the call that used it. A leaf that requires
    grad among the results keeps the first line that returned it (`leaf_line`). Called after every
    torch call a watch sees: a result with no new node costs little."""
    line, tensor = None, _tensor_class()
    for t in result if type(result) in (tuple, list) else (result,):
        if not isinstance(t, tensor):   # (asking anything else for a grad_fn can cost 50 µs)
            continue
        fn = t.grad_fn
        if fn is None:
            if t.requires_grad and id(t) not in _LEAF_LINES:   # made a leaf that requires grad, or initialised it
                line = line_for() if line is None else line
                if line is not None:
                    _keep_leaf_line(t, line)
            continue
        if KEY in fn.metadata:
            continue
        line = line_for() if line is None else line
        if line is None:
            return
        stack = [fn]
        while stack:
            node = stack.pop()
            if node is None or is_accumulate(node):
                continue
            meta = node.metadata
            if KEY in meta:
                continue
            nr = sequence_nr(node)
            if nr is not None and nr < start:
                continue
            meta[KEY] = line
            stack.extend(nxt for nxt, _ in node.next_functions)


def _keep_leaf_line(tensor, line: tuple) -> None:
    key = id(tensor)
    _LEAF_LINES[key] = (weakref.ref(tensor, lambda _, key=key: _LEAF_LINES.pop(key, None)), line)


def leaf_line(tensor) -> tuple | None:
    """(file, line, text) of the learner's line that made `tensor` a leaf requiring grad (`torch.zeros(3,
    requires_grad=True)`, `w.requires_grad_()`, the `nn.Linear(4, 8)` whose initialisation filled a
    parameter in place), where a watch saw it; None otherwise."""
    kept = _LEAF_LINES.get(id(tensor))
    return kept[1] if kept is not None and kept[0]() is tensor else None


def line_of(fn) -> tuple | None:
    """(file, line, text) of the learner's line that made torch node `fn`: the one a watch kept, else
    the last of the learner's frames in the traceback anomaly mode kept; None when neither was kept."""
    if is_accumulate(fn):
        return None   # made where a leaf was first used, not where it was made: no line of its own
    meta = fn.metadata
    found = meta.get(KEY)
    if found is None and "traceback_" in meta:
        found = _from_traceback(meta["traceback_"])
    return found


def _from_traceback(frames) -> tuple | None:
    """The innermost frame outside torch and gradviz of a traceback as traceback.format_stack
    writes it (torch 2.13 keeps a list of such strings, outermost first)."""
    for entry in reversed(frames if isinstance(frames, (list, tuple)) else [frames]):
        for match in reversed(list(_FRAME.finditer(str(entry)))):
            file = match["file"]
            if not (file.startswith(_outside()) or os.path.abspath(file).startswith(_outside())):
                return file, int(match["line"]), (match["text"] or "").strip()
    return None


class LineWatch:
    """While on (`start` .. `stop`), every torch call's new nodes get the learner's line (and the numbers
    the call gave, numbers.py): the command line's watch over a script's forward, lighter than
    record_forward. torch keeps its modes per thread: `stop` takes the watch off the stack of the
    thread that started it, and from any thread turns it off first."""

    def __init__(self):
        self.mode = None
        self.on = False
        self._thread = None

    def start(self) -> None:
        if self.mode is not None:
            return
        self.mode, self.on, self._thread = _watch_mode()(self), True, threading.get_ident()
        self.mode.__enter__()

    def stop(self) -> None:
        """Off, and off torch's mode stack wherever on it the script's own modes left it."""
        self.on = False
        if self.mode is None or self._thread != threading.get_ident():
            return
        torch, mode, self.mode = torch_module(), self.mode, None
        above = []
        while torch._C._len_torch_function_stack():
            top = torch._C._pop_torch_function_stack()
            if top is mode:
                break
            above.append(top)
        for other in reversed(above):
            torch._C._push_on_torch_function_stack(other)


@lru_cache(maxsize=1)
def _watch_mode():
    """LineWatch's TorchFunctionMode (a class made once: torch is imported on first use)."""
    class _Lines(torch_module().overrides.TorchFunctionMode):
        def __init__(self, watch):
            super().__init__()
            self.watch = watch

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if not self.watch.on or compiling():
                return func(*args, **(kwargs or {}))
            start = next_number()
            result = func(*args, **(kwargs or {}))
            claim(result, start)
            numbers.keep(result, start, args, kwargs, next_number())
            return result
    return _Lines
