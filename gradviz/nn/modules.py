"""nn.Module and the common layers. A module's forward runs inside a named scope,
so diagrams group its nodes in a cluster labelled by the module's name."""
from __future__ import annotations

import functools
import inspect
import math
import operator
from collections import OrderedDict
from itertools import islice

from .. import backend, creation, dtypes
from ..functions.loss import _legacy_reduction
from ..scope import scope
from ..tensor import Tensor, zero_grads
from . import functional as F
from . import init


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter (requires_grad=True by default)."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        data = data if data is not None else creation.tensor([])
        t = Tensor._make(data._data)
        t.__class__ = cls
        if data._vc:   # the same storage, so the same version counter (torch's _make_subclass)
            t._vc = data._vc
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Holds parameters, buffers and submodules; calling it runs forward inside its scope,
    with torch's forward pre-hooks, forward hooks and full backward hooks around it."""

    training = True
    _forward_pre_hooks: dict = {}
    _forward_hooks: dict = {}
    _backward_hooks: dict = {}

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
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (torch.Tensor or None "
                                "expected)")
            buffers[name] = value
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
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None "
                            "required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)
        object.__setattr__(self, name, tensor)

    def register_parameter(self, name: str, param):
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
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks):
            with scope(self._scope_name):
                return self.forward(*args, **kwargs)
        from .hooks import call_with_hooks
        with scope(self._scope_name):
            return call_with_hooks(self, args, kwargs)

    # -- hooks ----------------------------------------------------------------------------------
    def _add_hook(self, table: str, hook, prepend: bool, **flags):
        from .hooks import RemovableHandle
        hooks = self.__dict__.get(table)
        if hooks is None:
            hooks = OrderedDict()
            object.__setattr__(self, table, hooks)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = (hook, flags)
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """hook(module, args) runs before forward and may return new args."""
        return self._add_hook("_forward_pre_hooks", hook, prepend, with_kwargs=with_kwargs)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """hook(module, args, output) runs after forward and may return a new output."""
        return self._add_hook("_forward_hooks", hook, prepend, with_kwargs=with_kwargs, always_call=always_call)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """hook(module, grad_input, grad_output) runs when the gradients w.r.t. the module's
        inputs are computed, and may return new grad_input."""
        return self._add_hook("_backward_hooks", hook, prepend)

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

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        return (b for _, b in self.named_buffers(recurse=recurse))

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
        return (m for _, m in self.named_modules())

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        return (m for _, m in self.named_children())

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
        from .. import dtypes
        return self.to(dtypes.float64)

    def half(self):
        from .. import dtypes
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

    def float(self):
        from .. import dtypes
        return self.to(dtypes.float32)

    # -- state ----------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters and persistent buffers by qualified name, this module's first, then each child's."""
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy matching entries in place; torch's errors for missing, unexpected and mis-shaped keys."""
        from .hooks import load_state_dict
        return load_state_dict(self, state_dict, strict, assign)

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


def _typename(obj) -> str:
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


def _adopt(module: Module, name: str, old: str | None = None) -> None:
    """`module` is now its parent's member `name` (before: `old`, when it moved): its scope is named
    after it, and its parameters' own names become qualified as named_parameters() gives them
    ("0.bias", "fc1.weight"), so two layers' biases are told apart in a picture; a name the learner
    gave stays."""
    object.__setattr__(module, "_scope_name", f"{name} ({type(module).__name__})")
    for qualified, p in module.named_parameters():
        if p.name == qualified or (old is not None and p.name == f"{old}.{qualified}"):
            p.name = f"{name}.{qualified}"


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        # PyTorch's reset_parameters: kaiming_uniform_(a=√5) on the weight (U(−1/√in, 1/√in), its
        # bound computed as torch does), then U(−1/√in, 1/√in) on the bias
        self.weight = Parameter(creation.empty(out_features, in_features, dtype=dtype))
        bound = 1 / math.sqrt(in_features) if in_features else 0
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.bias = Parameter(creation.empty(out_features, dtype=dtype).uniform_(-bound, bound)) if bias else None

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Sequential(Module):
    """Modules run one after another, each on the output of the one before; as torch's, a list of
    them too: indexing, slicing (a Sequential keeping the members' names), item assignment and
    deletion (the rest renumbered), append, insert, extend, pop, + and *."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _key(self, idx) -> str:
        """The key of member `idx` (an int, negative from the end): torch's _get_item_by_idx."""
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return next(islice(self._modules.keys(), idx % size, None))

    def _members(self, pairs) -> None:
        """self's members become exactly `pairs` of (key, module), in order, as torch's del and insert
        leave _modules. gradviz keeps each member as an attribute too, so those are rebound; a member
        that moved takes its new key in its scope and in its parameters' names."""
        old = {id(m): k for k, m in reversed(list(self._modules.items()))}   # a shared module: its first key
        for key in self._modules:
            self.__dict__.pop(key, None)
        self._modules.clear()
        for key, module in pairs:
            self._modules[key] = module
            object.__setattr__(self, key, module)
            if module is not None and old.get(id(module)) != key:
                _adopt(module, key, old.get(id(module)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key(idx)]

    def __setitem__(self, idx, module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._key(idx))
        # the rest renumbered "0", "1", ... (a name an OrderedDict gave is lost, as in torch)
        self._members(zip((str(i) for i in range(len(self._modules))), list(self._modules.values())))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def __add__(self, other):
        if isinstance(other, Sequential):
            return Sequential().extend(self).extend(other)
        raise ValueError(f"add operator supports only objects of Sequential class, but {str(type(other))} is given.")

    def __iadd__(self, other):
        if isinstance(other, Sequential):
            return self.extend(other)
        raise ValueError(f"add operator supports only objects of Sequential class, but {str(type(other))} is given.")

    def __mul__(self, other: int):
        self._check_factor(other)
        return Sequential().extend(list(self) * other)

    def __rmul__(self, other: int):
        return self.__mul__(other)

    def __imul__(self, other: int):
        self._check_factor(other)
        return self.extend(list(self) * (other - 1))

    def _check_factor(self, other) -> None:
        """torch's errors for a Sequential repeated by something other than a positive int."""
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def pop(self, key):
        """Remove member `key` (an int or a slice) and return it (a Sequential for a slice)."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self:
            input = module(input)
        return input

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module):
        """Put `module` at `index`, the members from there on shifted one key up (torch's steps: the
        keys "index".."n-1" are read, so a Sequential with named members raises KeyError)."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        members = OrderedDict(self._modules)
        for i in range(n, index, -1):
            members[str(i)] = members[str(i - 1)]
        members[str(index)] = module
        self._members(members.items())
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self


def _activation(name, fn, doc):
    def forward(self, input):
        return fn(input)
    return type(name, (Module,), {"forward": forward, "__doc__": doc})




class ReLU(Module):
    """max(x, 0); inplace=True rewrites the input (relu_), as torch's."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return input.relu_() if self.inplace else F.relu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""
Sigmoid = _activation("Sigmoid", F.sigmoid, "1 / (1 + e^−x)")
Tanh = _activation("Tanh", F.tanh, "tanh x")


class GELU(Module):
    """x Φ(x) (or its tanh approximation)."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}"


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=4)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class BCELoss(_WeightedLoss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


# -- containers: their members are submodules (and parameters) named "0", "1", ... or by key --------
class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, i: int) -> str:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range")
        return str(i % n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ModuleList(list(self._modules.values())[i])
        return self._modules[self._index(i)]

    def __setitem__(self, i, module):
        setattr(self, self._index(i), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        setattr(self, str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module):
        members = list(self._modules.values())
        members.insert(index, module)
        self._modules.clear()
        for m in members:
            self.append(m)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList is not callable: iterate over it and call each module")

    def __repr__(self):
        """torch's: runs of identical members print once, as (0-2): 3 x Linear(...)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []   # [start, end, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2) for a, b, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str):
        return self._modules[key]

    def __setitem__(self, key: str, module):
        setattr(self, key, module)

    def __delitem__(self, key: str):
        del self._modules[key]
        object.__delattr__(self, key)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def update(self, modules):
        for key, m in (modules.items() if hasattr(modules, "items") else modules):
            setattr(self, key, m)

    def pop(self, key: str):
        m = self._modules[key]
        del self[key]
        return m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict is not callable: look a module up by key and call it")


class ParameterList(Module):
    def __init__(self, values=None):
        super().__init__()
        for p in values or ():
            self.append(p)

    def __getitem__(self, i: int):
        return list(self._parameters.values())[i]

    def __setitem__(self, i: int, param):
        setattr(self, str(i % len(self)), param if isinstance(param, Parameter) else Parameter(param))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value):
        setattr(self, str(len(self)), value if isinstance(value, Parameter) else Parameter(value))
        return self

    def extra_repr(self):
        return "\n".join(f"  ({k}): Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}"
                         f"{'' if p.device.type == 'cpu' else f' ({p.device})'}]" for k, p in enumerate(self))

    def extend(self, values):
        for v in values:
            self.append(v)
        return self


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


# -- activations ------------------------------------------------------------------------------------
SiLU = _activation("SiLU", F.silu, "x σ(x)")
Mish = _activation("Mish", F.mish, "x tanh(softplus x)")
SELU = _activation("SELU", F.selu, "λ·elu(x, α) with the self-normalizing constants")
Softsign = _activation("Softsign", F.softsign, "x / (1 + |x|)")
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, "clamp(x/6 + 1/2, 0, 1)")
Hardswish = _activation("Hardswish", F.hardswish, "x · clamp(x + 3, 0, 6)/6")
LogSigmoid = _activation("LogSigmoid", F.logsigmoid, "log σ(x)")
ReLU6 = _activation("ReLU6", F.relu6, "min(max(x, 0), 6)")


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha

    def forward(self, input):
        return F.elu(input, self.alpha)

    def extra_repr(self):
        return f"alpha={self.alpha}"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmin(Softmax):
    def forward(self, input):
        return F.softmin(input, self.dim)


# -- losses ---------------------------------------------------------------------------------------
class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class KLDivLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


# -- layers with state ------------------------------------------------------------------------------
class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(creation.ones(*shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(creation.zeros(*shape, dtype=dtype)) if elementwise_affine and bias else None

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, _weight=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            weight = creation.empty(num_embeddings, embedding_dim, dtype=dtype).normal_()   # N(0, 1), as PyTorch
            if padding_idx is not None:
                weight._data[padding_idx] = 0
        else:
            weight = _weight
        self.weight = Parameter(weight)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


class _NormBase(Module):
    """What batch and instance norms share: one scale and shift per channel, and running
    statistics when `track_running_stats` (torch.nn.modules.batchnorm._NormBase)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(creation.ones(num_features, dtype=dtype)) if affine else None
        self.bias = Parameter(creation.zeros(num_features, dtype=dtype)) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=dtypes.int64))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_NormBase):
    """Normalizes each channel (dim 1 of (N, C) or (N, C, L)) with the batch's statistics while
    training, and with the running averages it kept of them in eval mode."""

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.shape[1] != self.num_features:
            raise RuntimeError(f"running_mean should contain {input.shape[1]} elements not {self.num_features}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked._data[...] += 1
            if self.momentum is None:   # a cumulative moving average
                momentum = 1.0 / int(self.num_batches_tracked._data)
        use_batch = self.training or not self.track_running_stats
        return F.batch_norm(input, self.running_mean if not use_batch or self.track_running_stats else None,
                            self.running_var if not use_batch or self.track_running_stats else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)
