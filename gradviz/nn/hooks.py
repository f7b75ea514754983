"""What a Module call does around forward when hooks are registered, and load_state_dict.

Full backward hooks work as torch's: the module's tensor inputs and outputs pass through
an identity Function (BackwardHookFunction, drawn as BackwardHookFunctionBackward); the
outputs' node records grad_output (after the backward pre-hooks, which may replace it), and
the inputs' node, running just after the module's own backward, calls
hook(module, grad_input, grad_output) and may replace grad_input. The deprecated non-full
hooks (register_backward_hook) attach to the output's own grad_fn, as torch's do.
Hooks registered for every module (register_module_*_hook) live in this module's tables.
(A module's state_dict and load_state_dict, with their hooks, are gradviz.nn.state_dict's.)
"""
from __future__ import annotations

import functools
from collections import OrderedDict

from .._warn import warn
from ..autograd.function import Function
from ..autograd.hooks import RemovableHandle  # noqa: F401  (the one handle; module.py takes it from here)
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor

# torch.nn.modules.module's global hook tables: id -> (hook, flags), run before each module's own
global_forward_pre_hooks: dict = OrderedDict()
global_forward_hooks: dict = OrderedDict()
global_backward_hooks: dict = OrderedDict()
global_backward_pre_hooks: dict = OrderedDict()
global_full_backward = [None]   # True/False once a global full/non-full backward hook is registered


class BackwardHookFunction(Function):
    """Identity on tensors; its node is where a module's backward hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


def _wrap(values: tuple):
    """Pass the tensors among `values` through one BackwardHookFunction; returns (new values,
    the tensors' positions, the identity node or None)."""
    positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    if not positions or not is_grad_enabled() or not any(values[i].requires_grad for i in positions):
        return values, positions, None
    passed = BackwardHookFunction.apply(*[values[i] for i in positions])
    values = list(values)
    node = None
    for i, t in zip(positions, passed):
        values[i] = t
        node = node or t.grad_fn
    return tuple(values), positions, node


def _pack(positions: list, grads, n: int) -> tuple:
    out = [None] * n
    for i, g in zip(positions, grads):
        out[i] = g
    return tuple(out)


class _BackwardHook:
    """Connects one call of a module to its full backward hooks."""

    def __init__(self, module, hooks: list, pre_hooks: list):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.input_positions = None
        self.n_inputs = 0

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, positions, node = _wrap(args)
        if node is not None:
            self.input_positions = positions
            node.register_prehook(self._input_hook)
        return args

    def _input_hook(self, grads: tuple):
        if self.grad_outputs is None:   # the module's outputs were not used: torch calls no hook
            return None
        grad_inputs = _pack(self.input_positions, grads, self.n_inputs)
        changed = False
        for hook in self.hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_inputs):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(result)}, but "
                                   f"expected {len(grad_inputs)}")
            grad_inputs, changed = result, True
        self.grad_outputs = None
        if not changed:
            return None
        return tuple(grad_inputs[i] for i in self.input_positions)

    def _run_without_inputs(self) -> None:
        warn("Full backward hook is firing when gradients are computed with respect to module outputs since no "
             "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
             "#torch.nn.Module.register_full_backward_hook for more details.")
        grad_inputs = (None,) * self.n_inputs
        for hook in self.hooks:
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                raise RuntimeError("Backward hook for Modules where no input requires "
                                   "gradient should always return None or None for all gradients.")
        self.grad_outputs = None

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        values = (result,) if single else result
        values, positions, node = _wrap(values)
        if node is not None:
            n = len(values)

            def output_hook(grads):
                self.grad_outputs = _pack(positions, grads, n)
                for pre_hook in self.pre_hooks:
                    result = pre_hook(self.module, self.grad_outputs)
                    if result is None:
                        continue
                    if len(result) != n:
                        raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                           f"{len(result)}, but expected {n}")
                    self.grad_outputs = result
                grad_outputs = self.grad_outputs
                if self.input_positions is None:   # no input needs a gradient: the hooks run now
                    self._run_without_inputs()
                return tuple(grad_outputs[i] for i in positions)
            node.register_prehook(output_hook)
        return values[0] if single else values


def any_global_hooks() -> bool:
    return bool(global_forward_pre_hooks or global_forward_hooks or global_backward_hooks or global_backward_pre_hooks)


def _with_kwargs(global_table: dict, own: dict, kw) -> list:
    """(hook, with_kwargs) for the global hooks, then the module's: a module keeps its forward hooks
    as torch does, the hook objects themselves, with the ids of those taking kwargs in a second table."""
    pairs = [(hook, flags["with_kwargs"]) for hook, flags in global_table.values()] if global_table else []
    pairs += [(hook, k in kw) for k, hook in own.items()] if kw else [(hook, False) for hook in own.values()]
    return pairs


def _run_forward_pre_hooks(module, args: tuple, kwargs: dict):
    for hook, with_kwargs in _with_kwargs(global_forward_pre_hooks, module._forward_pre_hooks,
                                          module.__dict__.get("_forward_pre_hooks_with_kwargs")):
        if with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but "
                                       f"got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    return args, kwargs


def _backward_hooks(module, full: bool) -> list:
    """The full (or the deprecated non-full) backward hooks that apply to this module, global ones first."""
    hooks = [hook for hook, _ in global_backward_hooks.values()] if global_full_backward[0] is full else []
    if module.__dict__.get("_is_full_backward_hook") is full:
        hooks += [hook for hook, _ in module._backward_hooks.values()]
    return hooks


def call_with_hooks(module, args: tuple, kwargs: dict):
    """torch's Module._call_impl: pre-hooks, backward-hook inputs, forward, forward hooks, outputs."""
    args, kwargs = _run_forward_pre_hooks(module, args, kwargs)
    full_hooks, non_full_hooks = _backward_hooks(module, True), _backward_hooks(module, False)
    pre_hooks = [hook for hook, _ in [*global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]]
    backward_hook = None
    if full_hooks or pre_hooks:
        backward_hook = _BackwardHook(module, full_hooks, pre_hooks)
        args = backward_hook.setup_input_hook(args)
    result = module.forward(*args, **kwargs)
    for hook, with_kwargs in _with_kwargs(global_forward_hooks, module._forward_hooks,
                                          module.__dict__.get("_forward_hooks_with_kwargs")):
        hook_result = hook(module, args, kwargs, result) if with_kwargs else hook(module, args, result)
        if hook_result is not None:
            result = hook_result
    if backward_hook is not None:
        if not isinstance(result, (Tensor, tuple)):
            warn(f"For backward hooks to be called, module output should be a Tensor or a tuple of Tensors but "
                 f"received {type(result)}")
        result = backward_hook.setup_output_hook(result)
    if non_full_hooks:
        _attach_non_full_hooks(module, non_full_hooks, args, result)
    return result


def _attach_non_full_hooks(module, hooks: list, args: tuple, result) -> None:
    """torch's deprecated backward hooks: hook(module, grad_input, grad_output) on the grad_fn of
    the module's first output tensor, so grad_input are that one node's input gradients."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(functools.partial(hook, module))
    reason = _non_full_hook_warning(args, result, grad_fn)
    if reason:
        warn(reason, FutureWarning)


def _non_full_hook_warning(inputs, result, grad_fn) -> str | None:
    """torch's Module._maybe_warn_non_full_backward_hook: which gradients a non-full hook misses."""
    use_full = "Please use register_full_backward_hook to get the documented behavior."
    results = (result,) if isinstance(result, Tensor) else result
    if not (isinstance(results, tuple) and all(isinstance(r, Tensor) for r in results)):
        return ("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                "Tensors is deprecated and will be removed in future versions. This hook will be missing some of "
                f"the grad_output. {use_full}")
    inputs = (inputs,) if isinstance(inputs, Tensor) else inputs
    if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
        return ("Using non-full backward hooks on a Module that does not take as input a single Tensor or a tuple "
                "of Tensors is deprecated and will be removed in future versions. This hook will be missing some of "
                f"the grad_input. {use_full}")
    out_grad_fn = {r.grad_fn for r in results if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        return ("Using a non-full backward hook when outputs are nested in python data structure is deprecated and "
                "will be removed in future versions. This hook will be missing some grad_output.")
    if len(out_grad_fn) > 1:
        return ("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
                f"{use_full}")
    if {i.grad_fn for i in inputs if i.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
        return ("Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
                "and will be removed in future versions. This hook will be missing some grad_input. "
                f"{use_full}")
    return None
