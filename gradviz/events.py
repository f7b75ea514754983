"""Graph events and the bus that carries them.

The engine and every op call `emit(...)` only after checking `listening()`, so an
engine with no listener builds no event at all.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable

_listeners: list[Callable[[Any], None]] = []


def listening() -> bool:
    return bool(_listeners)


def emit(event) -> None:
    for listener in tuple(_listeners):
        listener(event)


def subscribe(listener: Callable[[Any], None]) -> Callable[[], None]:
    """Add a listener; returns a function that removes it."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener) if listener in _listeners else None


@contextmanager
def listen(listener: Callable[[Any], None]):
    unsubscribe = subscribe(listener)
    try:
        yield listener
    finally:
        unsubscribe()


@dataclass(frozen=True, slots=True)
class NodeCreated:
    """An op ran with grad enabled: `node` (its grad_fn) now exists."""
    node: Any
    inputs: tuple
    outputs: tuple
    scope: tuple


@dataclass(frozen=True, slots=True)
class BackwardStarted:
    roots: tuple          # (node, output_nr) per root tensor
    seeds: tuple          # the seed gradient (array) per root


@dataclass(frozen=True, slots=True)
class NodeExecuted:
    """One VJP ran; `step` is the engine's Step (grads in, grads out per edge)."""
    step: Any


@dataclass(frozen=True, slots=True)
class GradAccumulated:
    tensor: Any           # the tensor whose .grad changed
    node: Any             # the node that wrote it (AccumulateGrad, or the grad_fn for retain_grad)
    contribution: Any     # array added
    total: Any            # array now in .grad


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
