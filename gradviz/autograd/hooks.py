"""The hooks around the graph's nodes: what one node holds (NodeHooks), the handle that removes a
hook, the backward running on this thread, and hooks over several tensors (register_multi_grad_hook)."""
from __future__ import annotations

import threading


class _RunningBackward(threading.local):
    run = None


_running = _RunningBackward()   # the backward pass running on this thread (set by the engine)


def current_backward():
    """The backward pass running on this thread (the latest one started), or None."""
    return _running.run


class RemovableHandle:
    """Returned by register_hook; .remove() unregisters the hook."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class NodeHooks:
    """Everything hooked onto one node; a node without hooks keeps None (checked once per step)."""

    __slots__ = ("tensor", "retains", "pre", "post", "post_accumulate")

    def __init__(self):
        self.tensor: dict = {}    # output_nr -> [hook(grad)] registered on the output tensor
        self.retains: dict = {}   # output_nr -> weakref to a tensor that called retain_grad()
        self.pre: list = []       # fn(grad_outputs), before the VJP
        self.post: list = []      # fn(grad_inputs, grad_outputs), after the VJP
        self.post_accumulate: list = []   # fn(tensor), after AccumulateGrad wrote tensor.grad


# -- hooks over several tensors -----------------------------------------------------------------
class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """mode='all': fn(grads) once per backward, when every tensor's gradient that this backward
    computes is known (None for the others); mode='any': fn(grad) for the first one."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    state = {"run": None, "grads": None, "count": 0, "expected": 0}

    def reset(run):
        state["run"], state["grads"], state["count"] = run, [None] * len(tensors), 0
        state["expected"] = sum(1 for t in tensors if run is None or run.will_reach(t))

    def make(i):
        def hook(grad):
            run = current_backward()
            if state["run"] is not run or run is None:
                reset(run)
            if mode == "any":
                if state["count"] == 0:
                    state["count"] = 1
                    fn(grad)
                return None
            state["grads"][i] = grad
            state["count"] += 1
            if state["count"] == state["expected"]:
                fn(tuple(state["grads"]))
            return None
        return hook
    return _MultiHandle([t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad])
