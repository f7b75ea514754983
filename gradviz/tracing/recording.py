"""Driving a backward under a Recorder without changing what the user sees (.grad put back)."""
from __future__ import annotations

from ..autograd.engine import backward_steps
from .recorder import Recorder
from .replay import collect, outputs_of, replay
from .trace import Trace


class GradSnapshot:
    """.grad of the given tensors, put back exactly: the same Tensor objects, the same values and
    the same version (accumulating bumps a .grad's version; its old data is valid again)."""

    def __init__(self, tensors):
        self.saved = [(t, t._grad, None if t._grad is None else t._grad._data,
                       None if t._grad is None or not t._grad._vc else t._grad._vc.version) for t in tensors]

    def restore(self) -> None:
        for t, grad, data, version in self.saved:
            t._grad = grad
            if grad is not None:
                grad._data = data
                if version is not None:
                    grad._vc.version = version
                elif grad._vc:
                    grad._vc.version = 0   # the counter was created by the write being undone


def record_backward(roots, gradient=None, names=None, retain_graph=True, show_saved=False,
                    jacobians: bool = False, write_grads: bool = False) -> Trace:
    """Run backward over `roots` step by step and return the Trace with every step.

    Recording changes nothing the user can see: afterwards every .grad (leaves and retained
    non-leaves) is the same object with the same values and version as before, and the graph
    is kept (retain_graph=True), so a later `.backward()` gives the plain gradient. Hooks run
    during the recorded backward (the Trace shows them) and stay registered.
    write_grads=True leaves the .grad the recorded backward wrote, as `.backward()` would;
    retain_graph=False frees the graph as `.backward()` does."""
    roots = tuple(roots)
    recorder = Recorder(jacobians=jacobians)
    live = replay(roots, recorder, names)
    outputs = outputs_of(roots, names)
    snapshot = None if write_grads else GradSnapshot(written_tensors(roots, live))
    try:
        with recorder:
            backward_steps(roots, gradient, retain_graph=retain_graph).run()
    finally:
        if snapshot is not None:
            snapshot.restore()
    return recorder.trace(outputs, show_saved)


def written_tensors(roots, live: dict) -> list:
    """Every tensor a backward from `roots` may write .grad into: the leaves and any
    tensor that called retain_grad() on the way."""
    found = {id(t): t for t in live.values()}
    for node in collect([t.grad_fn for t in roots if t.grad_fn is not None]):
        hooks = getattr(node, "hooks", None)
        if hooks is not None and hooks.retains:
            for ref in hooks.retains.values():
                t = ref()
                if t is not None:
                    found[id(t)] = t
    for t in roots:
        found[id(t)] = t
    return list(found.values())
