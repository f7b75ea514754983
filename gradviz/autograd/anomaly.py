"""Anomaly mode: while on, each node remembers the forward line that made it, and a VJP that
fails (or returns nan, with check_nan) first warns with that line. Also the one process-wide flag
a node's creation checks: is anomaly mode on, or any thread inside saved_tensors_hooks?"""
from __future__ import annotations

import functools
import os
import traceback
import warnings

from .._warn import warn


class _Anomaly:
    enabled = False
    check_nan = True


_anomaly = _Anomaly()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Watch:
    """Process-wide: is any thread inside saved_tensors_hooks, or anomaly mode on?"""
    hooks = 0
    on = False

    def update(self) -> None:
        self.on = self.hooks > 0 or _anomaly.enabled


_watch = _Watch()


def _forward_stack() -> list:
    """The caller's stack as traceback lines, without gradviz's own frames."""
    frames = [f for f in traceback.extract_stack()[:-1] if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    return traceback.format_list(frames)


def is_anomaly_enabled() -> bool:
    return _anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _anomaly.check_nan


class set_detect_anomaly:
    """Turns anomaly detection on or off at once (and back when used as a context)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev, self.prev_check_nan = _anomaly.enabled, _anomaly.check_nan
        _anomaly.enabled, _anomaly.check_nan = bool(mode), bool(check_nan)
        _watch.update()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self.prev, self.prev_check_nan
        _watch.update()
        return False


class detect_anomaly:
    """While on, each node remembers the forward line that made it; an error in its VJP (or a
    nan it returns, with check_nan) warns with that line before the error is raised."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev, self.prev_check_nan = _anomaly.enabled, _anomaly.check_nan
        _anomaly.enabled, _anomaly.check_nan = True, self.check_nan
        _watch.update()
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self.prev, self.prev_check_nan
        _watch.update()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def anomaly_warning(node) -> None:
    """torch's warning naming the forward line of the node whose VJP failed; as torch's C++ warnings,
    it is attributed to the learner's line that called backward, not to gradviz's engine."""
    stack = node.metadata.get("traceback_")
    if stack is None:
        warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect anomaly "
             "during forward pass for more information.")
        return
    warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n" + "".join(stack))
