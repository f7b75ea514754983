"""Named scopes (`with gradviz.scope("encoder"):`) that group nodes in diagrams."""
from __future__ import annotations

import threading

class _State(threading.local):
    path: tuple = ()


_state = _State()


def current_scope() -> tuple:
    return _state.path


class scope:
    """`with scope(name):` nodes created inside get `name` appended to their scope path. A class with
    two methods, not a generator: every Module call enters one, and this costs a third of
    @contextmanager's (0.5 against 1.2 µs)."""

    __slots__ = ("name", "prev")

    def __init__(self, name: str):
        self.name = str(name)

    def __enter__(self) -> None:
        self.prev = _state.path
        _state.path = self.prev + (self.name,)

    def __exit__(self, *exc) -> None:
        _state.path = self.prev
