"""Saved tensors and their hooks: SavedTensor (torch's _raw_saved_* objects) with register_hooks,
saved_tensors_hooks and save_on_cpu (pack a saved tensor when its node is made, unpack it when the VJP
reads it), disable_saved_tensors_hooks, and which inputs torch saves only when another input needs them."""
from __future__ import annotations

import contextlib
import threading

from ..tensor import Tensor
from .anomaly import _watch

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


# Which inputs need each saved input, for the ops where torch saves an input only when the
# other input's gradient is wanted (a product's gradient for a reads b, and vice versa).
_SAVED_FOR = {
    "MulBackward0": {"self": ("other",), "other": ("self",)},
    "DivBackward0": {"self": ("other",)},
    "MmBackward0": {"self": ("mat2",), "mat2": ("self",)},
    "BmmBackward0": {"self": ("mat2",), "mat2": ("self",)},
    "MvBackward0": {"self": ("vec",), "vec": ("self",)},
    "DotBackward0": {"self": ("tensor",), "tensor": ("self",)},
}


class _HookState(threading.local):
    stack: list = []


_hook_state = _HookState()


class SavedTensor:
    """One tensor a node saved for its VJP (torch's _raw_saved_* objects). With hooks,
    pack(tensor) ran when the node was made and unpack(packed) gives it back to the VJP."""

    __slots__ = ("node", "key", "pack", "unpack_hook", "packed")

    def __init__(self, node: Node, key: str):
        self.node, self.key = node, key
        self.pack = self.unpack_hook = self.packed = None

    def _set_hooks(self, pack, unpack) -> None:
        self.pack, self.unpack_hook = pack, unpack
        self.packed = pack(self.node._kept_value(self.key))

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Pack this saved tensor now, unpack it when it is used; one pair at a time."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                            "arg1: collections.abc.Callable) -> None")
        if self.node.freed:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
                               "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
                               "retain_graph=True if you need to backward through the graph a second time or if you "
                               "need to access saved variables after calling backward.")
        if self.pack is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only "
                               "one pair of hooks is allowed at a time.")
        self._set_hooks(pack_hook, unpack_hook)

    def unpack(self):
        if self.node.freed:
            raise RuntimeError(FREED_MESSAGE)
        if self.pack is None:
            return self.node._kept_value(self.key)
        value = self.unpack_hook(self.packed)
        if not isinstance(value, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(value).__name__}")
        if self.key == "result":   # as in torch, the unpacked output is again the node's output
            return Tensor._make(value._data, self.node, 0)
        return value

    @property
    def data(self):
        return self.unpack().detach()

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


class saved_tensors_hooks:
    """Inside the context every saved tensor is packed with pack_hook(tensor) when its node is
    made and given back by unpack_hook(packed) when the VJP (or _saved_*) reads it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _hook_state.stack = _hook_state.stack + [(self.pack_hook, self.unpack_hook)]
        _watch.hooks += 1
        _watch.update()
        return self

    def __exit__(self, *exc):
        _hook_state.stack = _hook_state.stack[:-1]
        _watch.hooks -= 1
        _watch.update()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept as copies in CPU memory and go back to their device when used."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(tensor):
            return tensor.device, tensor.detach().cpu().clone()

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


def disable_saved_tensors_hooks(error_message: str):
    """A context in which creating a node that saves tensors under hooks raises error_message."""
    @contextlib.contextmanager
    def ctx():
        def refuse(_):
            raise RuntimeError(error_message)
        with saved_tensors_hooks(refuse, refuse):
            yield
    return ctx()
