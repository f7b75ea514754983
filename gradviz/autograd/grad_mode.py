"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode; thread-local like PyTorch's."""
from __future__ import annotations

import functools
import inspect
import threading

from .. import tensor as _tensor
from .._args import argument_error, type_name
from ..tensor import INFERENCE, InferenceTensors


class _State(threading.local):
    enabled = True   # the class default is what every new thread sees


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    """True inside inference_mode() (which also turns grad mode off)."""
    return INFERENCE.on


def _set(mode: bool) -> None:
    _state.enabled = bool(mode)


def _decorate(fn, make_context):
    """fn run under a fresh context; a generator function has each of its steps run under it,
    as torch's decorators do, so the mode never leaks to the caller between yields."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with make_context():
                    request = next(gen)
                while True:
                    try:
                        response = yield request
                    except GeneratorExit:
                        with make_context():
                            gen.close()
                        raise
                    except BaseException as error:
                        with make_context():
                            request = gen.throw(error)
                    else:
                        with make_context():
                            request = gen.send(response)
            except StopIteration as stop:
                return stop.value
        return generator

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make_context():
            return fn(*args, **kwargs)
    return wrapper


class _GradMode:
    """A context manager that is also a decorator, with or without parentheses
    (@no_grad() and @no_grad both work, as in torch)."""

    mode = True

    def __new__(cls, orig_func=None):
        if orig_func is None or not callable(orig_func):
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        pass

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set(self.mode)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, fn):
        return _decorate(fn, self.__class__)


class no_grad(_GradMode):
    mode = False


class enable_grad(_GradMode):
    mode = True


class inference_mode(_GradMode):
    """torch.inference_mode: no_grad that is_inference_mode_enabled() reports; inference_mode(False)
    turns grad mode on, as torch's guard does. Tensors made inside are inference tensors: written in
    place outside it, or saved for a backward, they raise torch's errors."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode=True):
        self.enabled = bool(mode)

    def __enter__(self):
        self._prev, self._prev_inference = is_grad_enabled(), INFERENCE.on
        _set(not self.enabled)   # torch's guard: inference_mode(False) turns grad mode on
        INFERENCE.on = self.enabled
        with InferenceTensors.lock:
            _tensor.inference_contexts += 1
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        INFERENCE.on = self._prev_inference
        with InferenceTensors.lock:
            _tensor.inference_contexts -= 1
        return False

    def __call__(self, fn):
        enabled = self.enabled
        return _decorate(fn, lambda: inference_mode(enabled))


class set_grad_enabled(_GradMode):
    """Sets grad mode at once (like torch) and restores it when used as a context."""

    def __new__(cls, mode: bool):
        return object.__new__(cls)

    def __init__(self, mode: bool):
        if type(mode) is not bool:   # torch's C++ setter takes a bool only: set_grad_enabled("no") is refused
            raise argument_error("set_grad_enabled", "enabled", 1, "bool", type_name(mode))
        self._prev = is_grad_enabled()
        self.mode = bool(mode)
        _set(mode)

    def __enter__(self):
        return self

    def __call__(self, fn):
        _set(self._prev)
        mode = self.mode
        return _decorate(fn, lambda: set_grad_enabled(mode))


class _Formula(threading.local):
    """Per thread: are VJP rules running on Tensors (create_graph=True)? The engine sets it; a custom
    Function's own backward clears it."""

    active = False   # a VJP rule is being recorded (create_graph): scalars multiply as torch's formulas do


_formula = _Formula()
