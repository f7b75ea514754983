"""A torch node as it stood when its backward was recorded, for a Trace built later.

A recording reads most of a node when a view first reads the Trace (origin.py), after torch's
backward ran. What a node says of itself then is what it said before, except the tensors it saved:
a backward without retain_graph frees them, and an in-place write makes torch refuse them. So
`freeze` takes those tensors (and their version counters) while the graph is whole, and a Frozen
node serves them as torch would have then: the tensor itself, or torch's own RuntimeError where it
was written in place since (its version counter moved, or for a saved number, whose value a view
reads as it is, that value changed: a write through `.data` moves no counter). Everything else
(its edges, metadata, ints, sizes) it reads from the node, which keeps them. Its type has the node type's name and `_saved_*` fields, so code that
reads a node reads a Frozen one alike."""
from __future__ import annotations

from functools import lru_cache

from .attrs import saved_names
from .support import torch_module

_MODIFIED = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
             "{} was saved at version {} and is now at version {}")
_WRITTEN = "{} was written through .data since it was saved"


class Frozen:
    """A node and the tensors it had saved when it was frozen; its other attributes are the node's."""
    __slots__ = ("node", "held")

    def __init__(self, node, held: dict):
        self.node = node
        self.held = held   # field -> (value, its tensors' marks), or the RuntimeError torch raised

    def __getattr__(self, name):
        return getattr(self.node, name)


def _mark(t) -> tuple:
    """What tells a later write to `t`: its version, and a 0-d CPU tensor's value (a view shows it)."""
    return t._version, _value(t) if t.ndim == 0 and t.is_cpu else None


def _value(t) -> bytes | None:
    try:
        return t.detach().numpy().tobytes()
    except (RuntimeError, TypeError):   # a dtype NumPy lacks, neg or conj bit set
        return None


def _unpack(held, name: str):
    if isinstance(held, Exception):
        raise held
    value, marks = held
    for t, (version, sample) in zip(_tensors(value), marks):
        if t._version != version:
            raise RuntimeError(_MODIFIED.format(name, version, t._version))
        if sample is not None and _value(t) != sample:
            raise RuntimeError(_WRITTEN.format(name))
    return value


def _field(name: str, attr: str) -> property:
    def get(self):
        held = self.held.get(name)
        return getattr(self.node, attr) if held is None else _unpack(held, attr)
    return property(get)


@lru_cache(maxsize=None)
def frozen_type(kind: type) -> type:
    """The Frozen type of a node type: its name, and its `_saved_*` fields (and a custom Function's
    saved_tensors) served from what was held."""
    fields = {f"_saved_{n}": _field(n, f"_saved_{n}") for n in saved_names(kind)}
    if hasattr(kind, "_raw_saved_tensors"):
        fields["saved_tensors"] = _field("saved_tensors", "saved_tensors")
    return type(kind.__name__, (Frozen,), {"__slots__": (), "__module__": __name__, **fields})


_VOLATILE: dict = {}   # node type -> the fields whose values are tensors (freed by a backward, or refused after a write)


def _volatile(fn) -> tuple:
    kind = type(fn)
    names = _VOLATILE.get(kind)
    if names is None:
        torch = torch_module()
        found = []
        for n in saved_names(kind):
            try:
                value = getattr(fn, f"_saved_{n}")
            except RuntimeError:   # freed already: a tensor, or a list of them
                found.append(n)
                continue
            if value is None or isinstance(value, torch.Tensor) or (
                    isinstance(value, (tuple, list)) and (not value or any(isinstance(v, torch.Tensor) for v in value))):
                found.append(n)   # None: an optional tensor this node did not get
        if hasattr(kind, "_raw_saved_tensors"):
            found.append("saved_tensors")
        names = _VOLATILE[kind] = tuple(found)
    return names


def _tensors(value) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(v for v in value if hasattr(v, "_version"))
    return (value,) if hasattr(value, "_version") else ()


def freeze(fn):
    """The node with the tensors it saved held now; the node itself where it saved none."""
    names = _volatile(fn)
    if not names:
        return fn
    held = {}
    for n in names:
        try:
            value = getattr(fn, n if n == "saved_tensors" else f"_saved_{n}")
        except RuntimeError as exc:   # freed by an earlier backward: refused later as now
            held[n] = exc
            continue
        held[n] = (value, tuple(_mark(t) for t in _tensors(value)))
    return frozen_type(type(fn))(fn, held)
