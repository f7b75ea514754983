"""Named scopes (`with gradviz.scope("encoder"):`) that group nodes in diagrams."""
from __future__ import annotations

import threading
from contextlib import contextmanager

_state = threading.local()


def current_scope() -> tuple:
    return getattr(_state, "path", ())


@contextmanager
def scope(name: str):
    """Nodes created inside get `name` appended to their scope path."""
    prev = current_scope()
    _state.path = prev + (str(name),)
    try:
        yield
    finally:
        _state.path = prev
