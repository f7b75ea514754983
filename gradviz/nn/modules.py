"""nn.Module and the common layers. A module's forward runs inside a named scope,
so diagrams group its nodes in a cluster labelled by the module's name."""
from __future__ import annotations

import math
from collections import OrderedDict

from .. import creation
from ..scope import scope
from ..tensor import Tensor
from . import functional as F


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter (requires_grad=True by default)."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        t = Tensor._make((data if data is not None else creation.tensor([]))._data)
        t.__class__ = cls
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Holds parameters and submodules; calling it runs forward inside its scope."""

    training = True

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_scope_name", type(self).__name__)
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._parameters[name] = value
            if value.name is None:
                value.name = name
        elif isinstance(value, Module):
            self._modules[name] = value
            object.__setattr__(value, "_scope_name", f"{name} ({type(value).__name__})")
        object.__setattr__(self, name, value)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")

    def __call__(self, *args, **kwargs):
        with scope(self._scope_name):
            return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = ""):
        seen = set()
        for name, p in self._parameters.items():
            if id(p) not in seen:
                seen.add(id(p))
                yield prefix + name, p
        for mname, m in self._modules.items():
            for name, p in m.named_parameters(f"{prefix}{mname}."):
                if id(p) not in seen:
                    seen.add(id(p))
                    yield name, p

    def parameters(self):
        return (p for _, p in self.named_parameters())

    def named_modules(self, prefix: str = ""):
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(f"{prefix}.{name}" if prefix else name)

    def children(self):
        return iter(self._modules.values())

    def zero_grad(self, set_to_none: bool = True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def train(self, mode: bool = True):
        object.__setattr__(self, "training", mode)
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def to(self, *args, **kwargs):
        for owner in [m for _, m in self.named_modules()]:
            for name, p in list(owner._parameters.items()):
                moved = Parameter(p.detach().to(*args, **kwargs), p.requires_grad)
                moved.name = p.name
                owner.__setattr__(name, moved)
        return self

    def double(self):
        from .. import dtypes
        return self.to(dtypes.float64)

    def float(self):
        from .. import dtypes
        return self.to(dtypes.float32)

    def state_dict(self):
        return OrderedDict((n, p.detach()) for n, p in self.named_parameters())

    def load_state_dict(self, state):
        params = dict(self.named_parameters())
        for name, value in state.items():
            params[name]._data[...] = value._data

    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, m in self._modules.items():
            lines.append(f"  ({name}): " + repr(m).replace("\n", "\n  "))
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features) if in_features else 0
        # PyTorch's default: kaiming_uniform(a=√5) for the weight, which is U(−1/√in, 1/√in)
        self.weight = Parameter(creation.empty(out_features, in_features, dtype=dtype).uniform_(-bound, bound))
        self.bias = Parameter(creation.empty(out_features, dtype=dtype).uniform_(-bound, bound)) if bias else None

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            modules = modules[0].items()
        else:
            modules = ((str(i), m) for i, m in enumerate(modules))
        for name, m in modules:
            setattr(self, name, m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)


def _activation(name, fn, doc):
    def forward(self, input):
        return fn(input)
    return type(name, (Module,), {"forward": forward, "__doc__": doc})


ReLU = _activation("ReLU", F.relu, "max(x, 0)")
Sigmoid = _activation("Sigmoid", F.sigmoid, "1 / (1 + e^−x)")
Tanh = _activation("Tanh", F.tanh, "tanh x")
GELU = _activation("GELU", F.gelu, "x Φ(x)")


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)


class Dropout(Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, input):
        return F.dropout(input, self.p, self.training)


class MSELoss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class CrossEntropyLoss(Module):
    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__()
        self.weight, self.ignore_index, self.reduction, self.label_smoothing = (weight, ignore_index, reduction,
                                                                                label_smoothing)

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class NLLLoss(CrossEntropyLoss):
    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class BCELoss(MSELoss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, reduction=self.reduction)
