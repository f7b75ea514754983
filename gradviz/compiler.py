"""torch.compile and torch.compiler, for programs written for PyTorch 2 (`model = torch.compile(model)`).

gradviz runs every model eagerly, op by op, so that each op's node can be drawn and stepped: `compile`
checks its arguments as torch does and returns what torch returns (a module wrapped in an
`OptimizedModule` that holds it as `_orig_mod`, a function as a function), and the result computes what
the model computes, as torch's "eager" backend does. Its backward is the eager graph's nodes, where
torch's compiled graph runs one CompiledFunctionBackward node.
"""
from __future__ import annotations

import functools

from .nn.modules.module import Module

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# torch 2.13's registered backends (list_backends(exclude_tags=())) by the tag that hides some by default
_DEBUG = ("aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
          "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
          "dynamo_accuracy_minifier_backend", "dynamo_minifier_backend", "eager", "eager_debug", "eager_noexcept",
          "invoke_subgraph", "pre_dispatch_eager", "ts")
_BACKENDS = {**dict.fromkeys(("cudagraphs", "inductor", "openxla", "tvm"), ""), **dict.fromkeys(_DEBUG, "debug"),
             "openxla_eval": "experimental"}


class OptimizedModule(Module):
    """A compiled module, as torch wraps it: the original under `_orig_mod` (its parameters are
    named `_orig_mod.weight`, as torch's state_dict names them), its attributes read through."""

    def __init__(self, mod: Module):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        if name == "_orig_mod":   # not set yet (while unpickling)
            raise AttributeError(name)
        return getattr(self._orig_mod, name)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None,
            disable: bool = False, **kwargs):
    """The model to run, checked as torch.compile checks it; used as a decorator without a model."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable, **kwargs)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise RuntimeError(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` for available "
                           "backends.")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kw):
        return model(*args, **kw)
    return compiled


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The backend names `compile` accepts, as torch lists them."""
    return sorted(name for name, tag in _BACKENDS.items() if tag not in (exclude_tags or ()))


def is_compiling() -> bool:
    """False: gradviz never traces a function to compile it."""
    return False


def is_dynamo_compiling() -> bool:
    return False


def disable(fn=None, recursive: bool = True, *, reason=None):
    """`fn` as it is (nothing is compiled to leave out); a decorator without `fn`."""
    return (lambda f: f) if fn is None else fn


def reset() -> None:
    """Forget compiled code: gradviz keeps none."""
