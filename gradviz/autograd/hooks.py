"""The hooks around the graph's nodes: what one node holds (NodeHooks), the handle that removes a
hook (torch.utils.hooks.RemovableHandle), the backward running on this thread, and hooks over several tensors (register_multi_grad_hook)."""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict


class _RunningBackward(threading.local):
    run = None


_running = _RunningBackward()   # the backward pass running on this thread (set by the engine)


def current_backward():
    """The backward pass running on this thread (the latest one started), or None."""
    return _running.run


class RemovableHandle:
    """Returned by every register_*hook (a tensor's, a node's, a module's), as
    torch.utils.hooks.RemovableHandle: the hook sits in its table under handle.id, and .remove()
    (or leaving a with block) takes it out of that table and of the tables of its flags."""

    __module__ = "gradviz.utils.hooks"   # where torch's lives (torch.utils.hooks) and prints from
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        # weak references, as torch's: a handle does not keep a dropped table alive
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = extra_dict if isinstance(extra_dict, list) else [] if extra_dict is None else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            table = ref()
            if table is not None:
                table.pop(self.id, None)

    # pickled and deep-copied (a saved or copied module keeps its hooks' handles) with the tables
    # themselves, as torch's: a weak reference cannot be pickled
    def __getstate__(self):
        return self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref)

    def __setstate__(self, state) -> None:
        table, self.id, extras = state
        self.hooks_dict_ref = weakref.ref(OrderedDict() if table is None else table)   # None: a dead reference
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras if d is not None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def add_hook(table: OrderedDict, hook) -> RemovableHandle:
    """table[handle.id] = hook; the handle removes it."""
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


class NodeHooks:
    """Everything hooked onto one node; a node without hooks keeps None (checked once per step)."""

    __slots__ = ("tensor", "retains", "pre", "post", "post_accumulate")

    def __init__(self):
        # each table: handle id -> hook, in the order they run
        self.tensor: dict = {}    # output_nr -> {id: hook(grad)} registered on the output tensor
        self.retains: dict = {}   # output_nr -> weakref to a tensor that called retain_grad()
        self.pre = OrderedDict()      # fn(grad_outputs), before the VJP
        self.post = OrderedDict()     # fn(grad_inputs, grad_outputs), after the VJP
        self.post_accumulate = OrderedDict()   # fn(tensor), after AccumulateGrad wrote tensor.grad


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
                fn(list(state["grads"]))   # a list, as torch passes it
            return None
        return hook
    return _MultiHandle([t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad])
