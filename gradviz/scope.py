"""Named scopes (`with gradviz.scope("encoder"):`) that group nodes in diagrams."""
from __future__ import annotations

import threading
from contextlib import contextmanager

class _State(threading.local):
    path: tuple = ()


_state = _State()


def current_scope() -> tuple:
    return _state.path


@contextmanager
def scope(name: str):
    """Nodes created inside get `name` appended to their scope path."""
    prev = current_scope()
    _state.path = prev + (str(name),)
    try:
        yield
    finally:
        _state.path = prev
