"""torch.utils.checkpoint: run part of a model without keeping what its backward reads, and run it
again when the backward needs it.

use_reentrant=False (torch's recommendation): the function runs as usual, with saved-tensor hooks
that keep only a position for each tensor its nodes save; the first unpack runs the function again
(random state as it was, grad on) collecting what its nodes save, in the same order. The graph and
its node names are the ones the function records; only the saved values come from the rerun.
use_reentrant=True (torch's old default): one CheckpointFunctionBackward node whose backward reruns
the function and backpropagates through that run.
"""
from __future__ import annotations

import warnings

from ..autograd.function import Function
from ..autograd.engine import backward as _backward
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.hooks import current_backward
from ..autograd.saved import saved_tensors_hooks
from ..random import fork_rng, get_rng_state, set_rng_state
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "noop_context_fn"]


def noop_context_fn():
    return _Nothing(), _Nothing()


class _Nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc) -> None:
        return None


def check_backward_validity(inputs) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor detached, requiring grad as it did (others as they are)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph; backward reruns the function with grad on and
    backpropagates through the rerun (so the parameters inside get their .grad from that inner pass)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function, ctx.preserve_rng_state = run_function, preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        run = current_backward()
        if run is not None and (not run.accumulate or run.only is not None):
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                               "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
                               "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(o, g) for o, g in zip(outputs, args) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in detached)


def _without_reentrant(function, preserve: bool, args: tuple, kwargs: dict):
    """Run `function`, its nodes saving positions only; the first unpack reruns it for the values."""
    state = get_rng_state() if preserve else None
    recomputed: list = []
    count = [0]

    def pack(tensor):
        count[0] += 1
        return count[0] - 1

    def unpack(position):
        if not recomputed:
            _rerun(function, state, args, kwargs, recomputed)
        return recomputed[position]

    with saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def _rerun(function, state, args: tuple, kwargs: dict, into: list) -> None:
    def keep(tensor):
        into.append(tensor.detach())
        return None

    with fork_rng(enabled=state is not None):
        if state is not None:
            set_rng_state(state)
        with enable_grad(), saved_tensors_hooks(keep, lambda _: None):
            function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True, **kwargs):
    """function(*args, **kwargs), its saved tensors recomputed during backward (torch's words and checks).
    context_fn, determinism_check, debug and early_stop are accepted as torch's defaults only."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
                      "two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if context_fn is not noop_context_fn or debug or determinism_check != "default" or not early_stop:
        raise NotImplementedError("gradviz's checkpoint takes context_fn, debug, determinism_check and early_stop "
                                  "at torch's defaults only")
    return _without_reentrant(function, preserve, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """A Sequential (or list of modules) in `segments` runs, every run but the last checkpointed."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
                      "two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
