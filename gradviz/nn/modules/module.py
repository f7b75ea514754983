"""torch.nn.modules.module: Module, the base of every layer. A module's forward runs inside a
named scope, so diagrams group its nodes in a cluster labelled by the module's name."""
from __future__ import annotations

import functools
import inspect
from collections import OrderedDict

from ... import backend
from ...scope import scope
from ...tensor import Tensor, zero_grads
from ..parameter import Buffer, Parameter, is_lazy
from ... import creation, dtypes
from ..._args import typename as _typename
from .. import hooks as _hooks
from .. import state_dict as _state
from ..hooks import RemovableHandle, call_with_hooks


class Module:
    """Holds parameters, buffers and submodules; calling it runs forward inside its scope,
    with torch's forward pre-hooks, forward hooks and full backward hooks around it."""

    training = True
    _forward_pre_hooks: dict = {}
    _forward_hooks: dict = {}
    _backward_hooks: dict = {}
    _backward_pre_hooks: dict = {}
    _global_hooks_registered = False   # set once any register_module_*_hook is called
    _version = 1   # recorded in state_dict()._metadata; a module reading older checkpoints raises its own

    def __init_subclass__(cls, **kwargs):
        """A gradviz layer built with device= makes its parameters and buffers there (torch's
        factory_kwargs): its __init__ runs with that device as the factories' default. A user's own
        Module subclass is left as written."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        signature = inspect.signature(init) if init is not None and cls.__module__.startswith("gradviz.") else None
        if signature is not None and "device" in signature.parameters:
            @functools.wraps(init)
            def on_device(self, *args, **kw):
                device = signature.bind(self, *args, **kw).arguments.get("device")
                if device is None:
                    return init(self, *args, **kw)
                with backend.device(device):
                    return init(self, *args, **kw)
            cls.__init__ = on_device

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_scope_name", type(self).__name__)
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        params, modules, buffers = self.__dict__.get("_parameters"), self.__dict__.get("_modules"), \
            self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            modules.pop(name, None)
            buffers.pop(name, None)
            params[name] = value
            if value.name is None:
                value.name = name
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' (torch.nn.Parameter or "
                                "None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = value
            _adopt(value, name)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (torch.nn.Module or "
                                "None expected)")
            modules[name] = None
        elif isinstance(value, Buffer) or buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (torch.nn.Buffer, "
                                "torch.Tensor or None expected)")
            persistent = value.persistent if isinstance(value, Buffer) else \
                name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            self.__dict__[table].pop(name, None)
        self._non_persistent_buffers_set.discard(name)
        object.__delattr__(self, name)

    def _get_name(self) -> str:
        return type(self).__name__

    def register_buffer(self, name: str, tensor, persistent: bool = True):
        """A tensor that is state but not a parameter (BatchNorm's running statistics)."""
        self._check_new_name("buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None "
                            "required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)
        object.__setattr__(self, name, tensor)

    def _check_new_name(self, kind: str, store: str, name) -> None:
        """torch's checks of a buffer's or parameter's name, in its order and words."""
        if store not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[store]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param):
        self._check_new_name("parameter", "_parameters", name)
        if param is None:
            self._parameters[name] = None
            object.__setattr__(self, name, None)
        else:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                                "(torch.nn.Parameter or None required)")
            setattr(self, name, param)

    def add_module(self, name: str, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if module is None:   # registered as an empty slot, as torch does
            self._modules[name] = None
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, module)

    register_module = add_module

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or self._global_hooks_registered):
            with scope(self._scope_name):
                return self.forward(*args, **kwargs)
        if Module._global_hooks_registered and not _hooks.any_global_hooks():
            Module._global_hooks_registered = False   # every global hook was removed: calls take the short path
        with scope(self._scope_name):
            return call_with_hooks(self, args, kwargs)

    # -- hooks ----------------------------------------------------------------------------------
    def _own_table(self, table: str) -> OrderedDict:
        hooks = self.__dict__.get(table)
        if hooks is None:
            hooks = OrderedDict()
            object.__setattr__(self, table, hooks)
        return hooks

    def _add_hook(self, table: str, hook, prepend: bool, **flags):
        hooks = self._own_table(table)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = (hook, flags)
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def _add_forward_hook(self, table: str, hook, prepend: bool, **flags):
        """As torch keeps them: table[id] = hook (code that walks _forward_pre_hooks finds the hook
        objects, as nn.utils.prune does), and each flag set as the id in table_<flag>."""
        hooks = self._own_table(table)
        flag_tables = {flag: self._own_table(f"{table}_{flag}") for flag, on in flags.items() if on}
        handle = RemovableHandle(hooks, extra_dict=list(flag_tables.values()))
        hooks[handle.id] = hook
        for flag_table in flag_tables.values():
            flag_table[handle.id] = True
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """hook(module, args) runs before forward and may return new args."""
        return self._add_forward_hook("_forward_pre_hooks", hook, prepend, with_kwargs=with_kwargs)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """hook(module, args, output) runs after forward and may return a new output."""
        return self._add_forward_hook("_forward_hooks", hook, prepend, with_kwargs=with_kwargs,
                                      always_called=always_call)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """hook(module, grad_input, grad_output) runs when the gradients w.r.t. the module's
        inputs are computed, and may return new grad_input."""
        self._choose_backward_hooks(full=True)
        return self._add_hook("_backward_hooks", hook, prepend)

    def register_backward_hook(self, hook):
        """The deprecated form: hook(module, grad_input, grad_output) on the output's grad_fn, whose
        grad_input are that node's input gradients (torch's words say what it misses)."""
        self._choose_backward_hooks(full=False)
        return self._add_hook("_backward_hooks", hook, False)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """hook(module, grad_output) runs when the gradients w.r.t. the module's outputs arrive,
        and may return new grad_output."""
        return self._add_hook("_backward_pre_hooks", hook, prepend)

    def _choose_backward_hooks(self, full: bool) -> None:
        if self.__dict__.get("_is_full_backward_hook", full) is not full:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    # -- traversal ------------------------------------------------------------------------------
    def _named_members(self, get_members, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    # generator functions, as torch's are: they print as <generator object Module.parameters at 0x...>
    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        """(qualified name, module) for this module and every submodule, each shared one once."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def apply(self, fn):
        """fn(module) on every submodule (children first), then on this one; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True):
        zero_grads(self.parameters(), set_to_none)

    def train(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def to(self, *args, **kwargs):
        dtype = next((a.dtype if isinstance(a, Tensor) else a for a in (*args, *kwargs.values())
                      if isinstance(a, (Tensor, dtypes.dtype))), None)   # to(dtype), to(dtype=...), to(tensor)
        if dtype is not None and not dtype.is_floating_point:   # gradviz holds no complex dtype
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")
        for owner in [m for _, m in self.named_modules()]:
            for p in owner._parameters.values():
                # the same Parameter objects (an optimizer built before .to() still holds them),
                # with new data, as torch's param.data = fn(param)
                if p is not None:
                    p._data = p.detach().to(*args, **kwargs)._data
                    if p._grad is not None:
                        p._grad._data = p._grad.to(*args, **kwargs)._data
            for name, b in list(owner._buffers.items()):
                if b is not None:
                    # integer counters keep their dtype when the module changes its float dtype
                    keep = b.is_floating_point() is False and any(getattr(a, "is_floating_point", False)
                                                                 for a in args + tuple(kwargs.values()))
                    owner.register_buffer(name, b if keep else b.to(*args, **kwargs),
                                          name not in owner._non_persistent_buffers_set)
        return self

    def double(self):
        return self.to(dtypes.float64)

    def half(self):
        return self.to(dtypes.float16)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def get_submodule(self, target: str):
        """The submodule at a dotted path ('blocks.0.attn'), with torch's errors."""
        module = self
        for item in target.split(".") if target else ():
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module, strict: bool = False) -> None:
        """Put `module` at a dotted path ('blocks.0.attn'), replacing what is there, with torch's errors."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        path, _, name = target.rpartition(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str):
        """The Parameter at a dotted path ('blocks.0.attn.weight'), with torch's errors."""
        return self._get_attribute(target, lambda owner, name: isinstance(getattr(owner, name), Parameter),
                                   "is not an nn.Parameter")

    def get_buffer(self, target: str):
        """The buffer at a dotted path ('bn.running_mean'), with torch's errors."""
        return self._get_attribute(target, lambda owner, name: name in owner._buffers, "is not a buffer")

    def _get_attribute(self, target: str, is_kind, not_kind: str):
        """The attribute a dotted path names, when is_kind(its owner, its name) holds."""
        path, _, name = target.rpartition(".")
        owner = self.get_submodule(path)
        if not hasattr(owner, name):
            raise AttributeError(f"{owner._get_name()} has no attribute `{name}`")
        if not is_kind(owner, name):
            raise AttributeError(f"`{name}` {not_kind}")
        return getattr(owner, name)

    def to_empty(self, *, device, recurse: bool = True):
        """Parameters and buffers replaced by uninitialized ones (torch.empty_like) on device; the
        Parameter objects stay, as .to() keeps them."""
        for owner in (m for _, m in self.named_modules()) if recurse else (self,):
            for p in owner._parameters.values():
                if p is not None:
                    p._data = creation.empty_like(p, device=device)._data
            for name, b in list(owner._buffers.items()):
                if b is not None:
                    owner.register_buffer(name, creation.empty_like(b, device=device),
                                          name not in owner._non_persistent_buffers_set)
        return self

    def float(self):
        return self.to(dtypes.float32)

    # -- state ----------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters, persistent buffers and extra state by qualified name, this module's first, then each
        child's; the result's `_metadata` holds each module's `_version`."""
        return _state.state_dict(self, destination, prefix, keep_vars)

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        _state.save_to_state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy matching entries in place; torch's errors for missing, unexpected and mis-shaped keys."""
        return _state.load_state_dict(self, state_dict, strict, assign)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        _state.load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                    error_msgs)

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def _overrides(self, name: str) -> bool:
        """Does this module's class write its own `name` (get_extra_state, set_extra_state)?"""
        return getattr(type(self), name) is not getattr(Module, name)

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) runs before state_dict() saves this module."""
        return self._add_hook("_state_dict_pre_hooks", hook, False)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata), which must return None, runs after it."""
        return self._add_hook("_state_dict_hooks", hook, False, public=True)

    def _register_state_dict_hook(self, hook):
        """The older form: the hook may return a new state dict."""
        return self._add_hook("_state_dict_hooks", hook, False, public=False)

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)."""
        return self._add_hook("_load_state_dict_pre_hooks", hook, False, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        return self._add_hook("_load_state_dict_pre_hooks", hook, False, with_module=with_module)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after load_state_dict loads this module (and its children)."""
        return self._add_hook("_load_state_dict_post_hooks", hook, False)

    # -- printing -------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _adopt(module: Module, name: str, old: str | None = None) -> None:
    """`module` is now its parent's member `name` (before: `old`, when it moved): its scope is named
    after it, and its parameters' own names become qualified as named_parameters() gives them
    ("0.bias", "fc1.weight"), so two layers' biases are told apart in a picture; a name the learner
    gave stays."""
    object.__setattr__(module, "_scope_name", f"{name} ({type(module).__name__})")
    for qualified, p in module.named_parameters():
        if p.name == qualified or (old is not None and p.name == f"{old}.{qualified}"):
            p.name = f"{name}.{qualified}"


# -- hooks on every module (torch.nn.modules.module's global hooks), run before each module's own --
def _add_global_hook(table: dict, hook, **flags) -> RemovableHandle:
    Module._global_hooks_registered = True
    handle = RemovableHandle(table)
    table[handle.id] = (hook, flags)
    return handle


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """hook(module, args) runs before every module's forward and may return new args."""
    return _add_global_hook(_hooks.global_forward_pre_hooks, hook, with_kwargs=False)


def register_module_forward_hook(hook, *, with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
    """hook(module, args, output) runs after every module's forward and may return a new output."""
    return _add_global_hook(_hooks.global_forward_hooks, hook, with_kwargs=with_kwargs, always_call=always_call)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """hook(module, grad_output) for every module, as Module.register_full_backward_pre_hook."""
    return _add_global_hook(_hooks.global_backward_pre_hooks, hook)


def _choose_global_backward_hooks(full: bool) -> None:
    if _hooks.global_full_backward[0] not in (None, full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _hooks.global_full_backward[0] = full


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """hook(module, grad_input, grad_output) for every module, as Module.register_full_backward_hook."""
    _choose_global_backward_hooks(full=True)
    return _add_global_hook(_hooks.global_backward_hooks, hook)


def register_module_backward_hook(hook) -> RemovableHandle:
    """The deprecated non-full form for every module, as Module.register_backward_hook."""
    _choose_global_backward_hooks(full=False)
    return _add_global_hook(_hooks.global_backward_hooks, hook)
