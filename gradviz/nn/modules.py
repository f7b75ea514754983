"""nn.Module and the common layers. A module's forward runs inside a named scope,
so diagrams group its nodes in a cluster labelled by the module's name."""
from __future__ import annotations

import math
from collections import OrderedDict

from .. import creation
from ..scope import scope
from ..tensor import Tensor
from . import functional as F
from . import init


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
        object.__setattr__(self, "_buffers", OrderedDict())
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

    def register_buffer(self, name: str, tensor, persistent: bool = True):
        """A tensor that is state but not a parameter (BatchNorm's running statistics)."""
        self._buffers[name] = tensor
        object.__setattr__(self, name, tensor)

    def register_parameter(self, name: str, param):
        if param is None:
            self._parameters.pop(name, None)
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, param)

    def add_module(self, name: str, module):
        setattr(self, name, module)

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

    def named_buffers(self, prefix: str = ""):
        for name, b in self._buffers.items():
            if b is not None:
                yield prefix + name, b
        for mname, m in self._modules.items():
            yield from m.named_buffers(f"{prefix}{mname}.")

    def buffers(self):
        return (b for _, b in self.named_buffers())

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
            for name, b in list(owner._buffers.items()):
                if b is not None:
                    # integer counters keep their dtype when the module changes its float dtype
                    keep = b.is_floating_point() is False and any(getattr(a, "is_floating_point", False)
                                                                 for a in args + tuple(kwargs.values()))
                    owner.register_buffer(name, b if keep else b.to(*args, **kwargs))
        return self

    def double(self):
        from .. import dtypes
        return self.to(dtypes.float64)

    def float(self):
        from .. import dtypes
        return self.to(dtypes.float32)

    def state_dict(self):
        state = OrderedDict()
        for prefix, m in self.named_modules():
            dot = prefix + "." if prefix else ""
            for n, p in m._parameters.items():
                if p is not None:
                    state[dot + n] = p.detach()
            for n, b in m._buffers.items():
                if b is not None:
                    state[dot + n] = b.detach()
        return state

    def load_state_dict(self, state):
        params = dict(self.named_parameters())
        params.update(self.named_buffers())
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
        # PyTorch's reset_parameters: kaiming_uniform_(a=√5) on the weight (U(−1/√in, 1/√in), its
        # bound computed as torch does), then U(−1/√in, 1/√in) on the bias
        self.weight = Parameter(creation.empty(out_features, in_features, dtype=dtype))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
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
class L1Loss(MSELoss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(Module):
    def __init__(self, reduction: str = "mean", beta: float = 1.0):
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(Module):
    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__()
        self.reduction, self.delta = reduction, delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCEWithLogitsLoss(Module):
    def __init__(self, weight=None, reduction: str = "mean", pos_weight=None):
        super().__init__()
        self.reduction = reduction
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class KLDivLoss(Module):
    def __init__(self, reduction: str = "mean", log_target: bool = False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


# -- layers with state ------------------------------------------------------------------------------
class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(creation.ones(*shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(creation.zeros(*shape, dtype=dtype)) if elementwise_affine and bias else None

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, _weight=None, dtype=None):
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


class BatchNorm1d(Module):
    """Normalizes each channel (dim 1 of (N, C) or (N, C, L)) with the batch's statistics while
    training, and with the running averages it kept of them in eval mode."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(creation.ones(num_features, dtype=dtype)) if affine else None
        self.bias = Parameter(creation.zeros(num_features, dtype=dtype)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            from .. import dtypes
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=dtypes.int64))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

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

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")
