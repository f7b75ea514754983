"""Where a Trace comes from, decided at the public entry points: gradviz tensors are
replayed into the Recorder (`tracing.build_trace`), real torch tensors go through the
torch bridge. The renderer and the player only ever receive the Trace."""
from __future__ import annotations

from .tracing import Trace, build_trace
from .torch_bridge import trace_from_torch


def is_torch(tensor) -> bool:
    """A real PyTorch tensor (checked by module, so torch is never imported to ask)."""
    return type(tensor).__module__.split(".")[0] == "torch"


def trace_of(tensors: tuple, names: dict | None = None, show_saved: bool = False, order_of=None,
             ctx_saved: bool = False) -> Trace:
    """The Trace behind gradviz tensors, or behind real torch tensors (through the torch bridge)."""
    if tensors and all(is_torch(t) for t in tensors):
        return trace_from_torch(*tensors, params=names, show_saved=show_saved, ctx_saved=ctx_saved)
    return build_trace(tensors, names, show_saved=show_saved, order_of=order_of, ctx_saved=ctx_saved)
