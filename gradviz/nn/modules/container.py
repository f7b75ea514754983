"""torch.nn.modules.container: Sequential and the list and dict containers, whose members are
submodules (or parameters) named "0", "1", ... or by key."""
from __future__ import annotations

import collections.abc
import operator
from collections import OrderedDict
from itertools import islice

from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent, _adopt


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
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module):
        members = list(self._modules.values())
        members.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(members):   # torch's insert moves members without add_module's checks
            if isinstance(m, Module):
                setattr(self, str(i), m)
            else:
                self._modules[str(i)] = m
                object.__setattr__(self, str(i), m)

    def forward(self, *args, **kwargs):
        raise NotImplementedError('Module [ModuleList] is missing the required "forward" function (a ModuleList is not '
                                  'callable: iterate over it and call each module)')

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
        self.add_module(key, module)

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
            self[key] = m

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


class ParameterDict(Module):
    """Parameters by string key, in insertion order (a plain tensor becomes a Parameter; any other
    value is kept as an attribute), with a dict's methods, as torch's."""

    def __init__(self, parameters=None):
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key, value) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in self._keys.copy():
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """From a ParameterDict or OrderedDict in its order, a plain mapping in sorted key order, or an
        iterable of (key, value) pairs."""
        if not isinstance(parameters, collections.abc.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, collections.abc.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, pair in enumerate(parameters):
                if not isinstance(pair, collections.abc.Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is"
                                    + type(pair).__name__)
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(pair)}; 2 is "
                                     "required")
                self[pair[0]] = pair[1]

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                device = f" ({p.device})" if p.device.type == "cuda" else ""
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.type()} of size {'x'.join(map(str, p.size()))}"
                             f"{device}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other):
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self
