"""Running one piece of code under PyTorch and under gradviz, and comparing what it prints.

A snippet is Python source that says `torch`; it runs once with `torch` bound to PyTorch
and once with `torch` bound to gradviz (as `import gradviz as torch` would), and what it
printed, with object addresses masked, is compared.
"""
from __future__ import annotations

import contextlib
import io
import re
import warnings

import gradviz

try:
    import torch as real_torch
except ImportError:   # the comparisons skip; the golden strings still run
    real_torch = None

needs_torch = __import__("pytest").mark.skipif(real_torch is None, reason="PyTorch is not installed")

ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def mask(text: str) -> str:
    """Object addresses vary from run to run: <MulBackward0 object at 0x...>."""
    return ADDRESS.sub("0x…", text)


def run_snippet(source: str, module) -> tuple[str, list[str]]:
    """Exec `source` with `torch` bound to `module`; return (printed text, warning messages)."""
    out = io.StringIO()
    namespace = {"torch": module, "__name__": "__snippet__"}
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        exec(compile(source, "<snippet>", "exec"), namespace)
    # torch appends where in its C++ sources a warning was raised; that part is not the message
    messages = [re.sub(r" \(Triggered internally at .*\)$", "", str(w.message), flags=re.S) for w in caught]
    return mask(out.getvalue()), messages


def gradviz_output(source: str) -> tuple[str, list[str]]:
    return run_snippet(source, gradviz)


def torch_output(source: str) -> tuple[str, list[str]]:
    return run_snippet(source, real_torch)
