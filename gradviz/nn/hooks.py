"""What a Module call does around forward when hooks are registered, and load_state_dict.

Full backward hooks work as torch's: the module's tensor inputs and outputs pass through
an identity Function (BackwardHookFunction, drawn as BackwardHookFunctionBackward); the
outputs' node records grad_output, and the inputs' node, running just after the module's
own backward, calls hook(module, grad_input, grad_output) and may replace grad_input.
"""
from __future__ import annotations

import itertools
import warnings
from collections import namedtuple
from collections.abc import Mapping

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor
from .parameter import Parameter, is_lazy

_handle_ids = itertools.count()


class RemovableHandle:
    """Returned by register_*_hook: .remove() (or leaving a with block) unregisters the hook."""

    def __init__(self, hooks: dict):
        self.hooks_dict_ref = hooks
        self.id = next(_handle_ids)

    def remove(self) -> None:
        self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


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

    def __init__(self, module, hooks: list):
        self.module, self.hooks = module, hooks
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

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        values = (result,) if single else result
        values, positions, node = _wrap(values)
        if node is not None:
            n = len(values)

            def output_hook(grads):
                self.grad_outputs = _pack(positions, grads, n)
                if self.input_positions is None:   # no input needs a gradient: the hooks run now
                    warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                                  "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                                  "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                                  "details.", stacklevel=5)
                    grad_inputs = (None,) * self.n_inputs
                    for hook in self.hooks:
                        res = hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not all(r is None for r in res):
                            raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                               "always return None or None for all gradients.")
                    self.grad_outputs = None
                return None
            node.register_prehook(output_hook)
        return values[0] if single else values


def call_with_hooks(module, args: tuple, kwargs: dict):
    """torch's Module._call_impl: pre-hooks, backward-hook inputs, forward, forward hooks, outputs."""
    for hook, flags in list(module._forward_pre_hooks.values()):
        if flags["with_kwargs"]:
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
    backward_hook = None
    if module._backward_hooks:
        backward_hook = _BackwardHook(module, [hook for hook, _ in module._backward_hooks.values()])
        args = backward_hook.setup_input_hook(args)
    result = module.forward(*args, **kwargs)
    for hook, flags in list(module._forward_hooks.values()):
        hook_result = hook(module, args, kwargs, result) if flags["with_kwargs"] else hook(module, args, result)
        if hook_result is not None:
            result = hook_result
    if backward_hook is not None:
        result = backward_hook.setup_output_hook(result)
    return result


# -- load_state_dict ---------------------------------------------------------------------------------
class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def load_state_dict(module, state_dict, strict: bool, assign: bool) -> _IncompatibleKeys:
    """Module.load_state_dict: walk the modules as state_dict does, copy each entry in place
    under no_grad, and collect torch's complaints before raising them all at once."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing, unexpected, errors = [], [], []

    def load(m, prefix: str) -> None:
        local = {k: v for k, v in m._parameters.items() if v is not None}
        local.update((k, v) for k, v in m._buffers.items()
                     if v is not None and k not in m._non_persistent_buffers_set)
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(value)}")
                continue
            if is_lazy(param) and not is_lazy(value):   # a lazy module takes the checkpoint's shape
                with no_grad():
                    param.materialize(value.shape)
            if tuple(value.shape) != tuple(param.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                              f"the shape in current model is {param.shape}.")
                continue
            if assign:
                if name in m._parameters:
                    new = value if isinstance(value, Parameter) else Parameter(value, param.requires_grad)
                    setattr(m, name, new)
                else:
                    m.register_buffer(name, value)
            else:
                with no_grad():
                    param.copy_(value)
        for key in state_dict:
            if key.startswith(prefix):
                parts = key[len(prefix):].split(".", 1)
                if (parts[0] not in m._modules) if len(parts) > 1 else (parts[0] not in local):
                    unexpected.append(key)
        for name, child in m._modules.items():
            if child is not None:
                load(child, prefix + name + ".")

    load(module, "")
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(module).__name__,
                                                                                "\n\t".join(errors)))
    return _IncompatibleKeys(missing, unexpected)
