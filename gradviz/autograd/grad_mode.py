"""Grad mode: no_grad, enable_grad, set_grad_enabled; thread-local like PyTorch's."""
from __future__ import annotations

import functools
import threading

class _State(threading.local):
    enabled = True   # the class default is what every new thread sees


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


def _set(mode: bool) -> None:
    _state.enabled = bool(mode)


class _GradMode:
    """A context manager that is also a decorator."""

    mode = True

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set(self.mode)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    mode = False


class enable_grad(_GradMode):
    mode = True


class set_grad_enabled(_GradMode):
    """Sets grad mode at once (like torch) and restores it when used as a context."""

    def __init__(self, mode: bool):
        self._prev = is_grad_enabled()
        self.mode = bool(mode)
        _set(mode)

    def __enter__(self):
        return self

    def __call__(self, fn):
        _set(self._prev)
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper
