"""Graph events and the bus that carries them.

The engine and `apply` emit an event only after checking `listening()` (one flag), so
an engine with no listener builds no event at all. Every event keeps the live objects
it is about (`node`, `tensor`, `step`) for listeners in the same program, and an
`info` field holding a plain record (gradviz.records) whose tensors are already Previews:
what a Recorder reads to build a Trace (later in-place writes cannot change a preview).

Listeners are called on the thread that emits; a listener subscribed with
`thread=threading.get_ident()` hears only its own thread's events. A listener that
raises is reported with a warning and never breaks the user's forward or backward.
"""
from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable

from .records import NodeRecord, StepRecord

_lock = threading.Lock()
_listeners: tuple = ()     # (listener, thread ident or None); truthy exactly when someone listens


def listening() -> bool:
    return bool(_listeners)


def emit(event) -> None:
    me = None
    for listener, thread in _listeners:
        if thread is not None:
            me = threading.get_ident() if me is None else me
            if thread != me:
                continue
        try:
            listener(event)
        except Exception as exc:   # a broken view must not break the user's computation
            warnings.warn(f"gradviz event listener {getattr(listener, '__qualname__', listener)!r} raised "
                          f"{type(exc).__name__}: {exc} (while handling {type(event).__name__}); the event was "
                          "skipped", RuntimeWarning, stacklevel=2)


def subscribe(listener: Callable[[Any], None], thread: int | None = None) -> Callable[[], None]:
    """Add a listener (for one thread's events only when `thread` is given); returns a
    function that removes it."""
    global _listeners
    entry = (listener, thread)
    with _lock:
        _listeners = _listeners + (entry,)

    def unsubscribe() -> None:
        global _listeners
        with _lock:
            if entry in _listeners:
                items = list(_listeners)
                items.remove(entry)
                _listeners = tuple(items)
    return unsubscribe


@contextmanager
def listen(listener: Callable[[Any], None], thread: int | None = None):
    unsubscribe = subscribe(listener, thread)
    try:
        yield listener
    finally:
        unsubscribe()


# -- the events ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NodeCreated:
    """An op ran with grad enabled: `node` (its grad_fn) now exists."""
    node: Any
    inputs: tuple
    outputs: tuple
    scope: tuple
    info: NodeRecord | None = None


@dataclass(frozen=True, slots=True)
class BackwardStarted:
    roots: tuple          # (node, output_nr) per root tensor
    seeds: tuple          # the seed gradient (array) per root
    implicit: tuple = ()  # per root: True when backward() made the seed itself (a scalar's 1)


@dataclass(frozen=True, slots=True)
class NodeExecuted:
    """One VJP ran; `step` is the engine's Step (grads in, grads out per edge), emitted before the
    node lets go of what it saved. The engine leaves `info` None (a Recorder describes the step,
    autograd.describe.step_info); an origin that describes its own steps (the torch bridge) fills it."""
    step: Any
    info: StepRecord | None = None


@dataclass(frozen=True, slots=True)
class GradAccumulated:
    tensor: Any           # the tensor whose .grad changed
    node: Any             # the node that wrote it (AccumulateGrad, or the grad_fn for retain_grad)
    contribution: Any     # array added
    total: Any            # array now in .grad
    before: Any = None    # array in .grad before (None: it was None)


@dataclass(frozen=True, slots=True)
class HookFired:
    node: Any
    output_nr: int
    hook: Any
    before: Any
    after: Any            # None when the hook returned None (gradient unchanged)


@dataclass(frozen=True, slots=True)
class BackwardFinished:
    steps: int


@dataclass(frozen=True, slots=True)
class TangentComputed:
    """Forward mode: an op pushed its inputs' tangents to its output(s) (J·t)."""
    op: Any               # the Op record
    inputs: tuple         # the primal inputs (Tensors)
    outputs: tuple        # the primal outputs
    tangents_in: tuple    # one tangent (Tensor) or None per input
    tangents_out: tuple   # one tangent per output
    rule: str             # 'explicit', 'pointwise', 'linear', 'bilinear' or 'transpose' (derived from the VJP)
    params: tuple = ()    # the op's non-tensor arguments (dim, the 2 of x * 2), as the forward got them
