"""Tensor's methods that are torch's functions (x.exp() is gradviz.exp(x)) or reach the autograd
engine (x.backward(), x.register_hook()), bound onto the class here, once both exist.

gradviz/__init__.py imports this module right after Tensor, so every Tensor has its methods before
any other code runs; the class itself (gradviz/tensor.py) imports nothing above it.
"""
from __future__ import annotations

import types
import warnings

import numpy as np

from . import backend, creation as _creation, dtypes, functions as _functions
from . import random as _random
from . import storage as _storage
from ._args import argument_error, check_int_range, invalid_arguments, is_number, type_name, with_method_errors
from ._calling import numpy_names, plain
from ._tensor_str import tensor_repr
from ._warn import warn_once
from .autograd import forward_ad as _forward_ad
from .autograd import grad_mode
from .autograd.grad_mode import _formula
from .autograd import views as _views
from .autograd.apply import apply as _apply
from .autograd.engine import backward as _backward
from .autograd.hooks import add_hook
from .autograd.nodes import AccumulateGrad
from .autograd.versions import VersionCounter
from .functions import index as _index
from .functions import shape as _shape
from .functions.declared import as_method as _method, methods as _declared_methods
from .functions.namespace import TENSOR
from .functions.pointwise import check_bounds as _check_bounds, compare as _compare
from .ops import pointwise as _pointwise
from .ops.core import broadcast_shape, expand_error
from .ops.fill import (BERNOULLI, BERNOULLI_TENSOR, CAUCHY, COPY, EXPONENTIAL, FILL, FILL_TENSOR, GEOMETRIC, LOG_NORMAL,
                       NORMAL, RANDOM_FROM_TO, RANDOM_FULL, RANDOM_TO, UNIFORM, ZERO)
from .ops.reduce import _ALL
from .tensor import INFERENCE, INFERENCE_WRITE, LEAF_INPLACE, WRITABLE_INFERENCE, Tensor


def _method_errors(method):
    """A method written here whose function's TypeErrors name the method's arguments (std, sort)."""
    wrapped = with_method_errors(method, method.__name__)
    wrapped.__wrapped__ = method   # its signature: numpy_names gives it NumPy's names (x.sort(axis=0))
    return wrapped


@numpy_names   # x.sum(axis=0, keepdims=True): torch's methods take NumPy's names too
class _Methods:
    """The methods, written as in a class body; bound onto Tensor below."""

    def numpy(self, *, force=False):
        # refused with grad mode on only, as torch's (a custom Function's forward, under no_grad, may call it)
        if self.requires_grad and not force and grad_mode.is_grad_enabled():
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        if self.device.type != "cpu" and not force:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        return backend.to_numpy(self._data)

    def __float__(self):
        # torch warns on float() only (not item(), int() or formatting), with grad mode on (so not inside
        # LBFGS.step, which runs under no_grad), before its checks
        if self.requires_grad and grad_mode.is_grad_enabled():
            warn_once("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                      "Consider using tensor.detach() first.")
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.item())

    # -- autograd attributes ----------------------------------------------------------
    @property
    def grad_fn(self):
        view = self._view
        if view is None:
            return self._grad_fn
        return _views.view_grad_fn(self, view)   # regenerated if the base was written since

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node
        view = self._view
        if view is not None:
            view.version = self._version

    def _counter(self) -> VersionCounter:
        counter = self._vc
        if not counter:
            counter = self._vc = VersionCounter()
            node = self._grad_fn
            if node is not None and node.result_counter is None and node.op.n_outputs == 1 \
                    and "result" in node.op.saves:
                node.result_counter = counter    # the node saved this tensor as its result
                node.result_version = 0
        return counter

    def _accumulator(self) -> AccumulateGrad:
        if self._accum is None:
            self._accum = AccumulateGrad(self)
        return self._accum

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after backward has accumulated into this leaf's .grad."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        return add_hook(self._accumulator()._hooks().post_accumulate, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        _backward((self,), gradient, retain_graph, create_graph, inputs)   # gradient as torch reads it

    def detach_(self) -> "Tensor":
        if self._view is not None:
            raise RuntimeError(_views.DETACH_VIEW)
        self.grad_fn = None
        self._requires_grad = False
        return self

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(F.unbind(self, 0))

    def __contains__(self, element) -> bool:
        """`x in t`: whether any entry equals x (a number or a tensor broadcast against t), as torch reads it;
        without it Python would iterate over the rows and ask each one for its truth."""
        if isinstance(element, Tensor) or is_number(element):
            return bool((element == self).any().item())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    def to(self, *args, **kwargs) -> "Tensor":
        """.to(dtype), .to(device), .to(other tensor)."""
        target_dtype, target_device = kwargs.get("dtype"), kwargs.get("device")
        flags = [a for a in args if isinstance(a, bool)]   # .to(dtype, non_blocking, copy)
        copy = kwargs.get("copy", len(flags) > 1 and flags[1])
        dtypes.check_memory_format(kwargs.get("memory_format"), self.ndim)
        for a in args:
            if isinstance(a, bool):
                continue
            if isinstance(a, dtypes.dtype):
                target_dtype = a
            elif isinstance(a, Tensor):
                target_dtype, target_device = a.dtype, a.device
            elif isinstance(a, (str, backend.device)):
                target_device = a
        out = self
        if target_device is not None and backend.device(target_device) != self.device:
            if self.requires_grad and grad_mode.is_grad_enabled():
                out = _shape.to_device(self, target_device)
            else:
                out = Tensor._make(backend.to_device(self._data, target_device))
                out._requires_grad = self._requires_grad
        if target_dtype is not None:
            np_dtype = dtypes.as_np(target_dtype)
            if np_dtype.kind not in "fc" and np_dtype != out._data.dtype:
                out = out.detach()   # integer and bool results are not differentiable
            out = _shape.to_dtype(out, np_dtype)
        if copy and out is self:
            out = F.clone(self)
        return out

    def contiguous(self, memory_format=None):
        dtypes.check_memory_format(memory_format, self.ndim)
        return F.contiguous(self)

    def storage_offset(self) -> int:
        """Where this tensor's first element lies in its storage, in elements: 0 for a tensor that owns
        its memory, the distance from the base's first element for a view (x[1:], x[:, 2])."""
        view = self._view
        if view is None:
            return 0
        return (_views._address(self._data) - _views._address(view.base._data)) // self._data.itemsize

    def storage(self):
        """torch's TypedStorage over this tensor's memory (its base's, for a view); deprecated in torch."""
        return _storage.typed_storage(self)

    def untyped_storage(self):
        return _storage.untyped_storage(self)

    def data_ptr(self) -> int:
        """The address of this tensor's first element."""
        return _views._address(self._data)

    # -- printing --------------------------------------------------------------------
    def __repr__(self):
        return tensor_repr(self)

    # -- in-place ops ----------------------------------------------------------------
    # The values are always written into self's own memory, so its views, its base,
    # .data and .detach() all see them. Without autograd that is all. With autograd the op
    # runs on a snapshot of self's old values (a copy, same grad_fn), so the new node keeps
    # what its VJP needs, and self takes the new history, as PyTorch rebases a tensor
    # modified in place; through a view, the base's history is rebased (CopySlices).
    def _records(self, *others) -> bool:
        """Will an in-place op on self, with these operands, be recorded in the graph?"""
        if not grad_mode.is_grad_enabled():
            return False
        if self.requires_grad:
            return True
        return any(isinstance(o, Tensor) and o.requires_grad for o in others)

    def _carries_tangent(self, *others) -> bool:
        """Does an in-place op on self, with these operands, have a tangent to carry (forward AD)? Then
        it runs through the op even when no graph is recorded, so the written tensor takes the tangent."""
        return _forward_ad._state.level is not None and _forward_ad.is_dual(self, *others)

    def _inplace_op(self, fn, *args, leaf_message: str = LEAF_INPLACE, overlap: bool = False,
                    **kwargs) -> "Tensor":
        """self <- fn(self, *args, **kwargs), in place. `overlap`: the op may write into a
        tensor whose elements share memory (an expand), as fill_ and zero_ may in PyTorch."""
        if not overlap:
            self._check_overlap()
        if self._records(*args):
            view = self._view
            if view is not None and _views.shares_memory(view.base, self):
                _views.check_view_write(self, view)
                result = fn(self._snapshot(), *args, **kwargs)
                self._store(result._data)
                self._bump()
                node = result._grad_fn
                if node is not None:
                    self._keep_result(node)
                    _views.rebase_base(self, view, node)
                    if node.result_counter is not None:
                        node.result_of = self._grad_fn.name()   # the saved result is the view: errors name its grad_fn
                return self
            if self._grad_fn is None and self._requires_grad:
                raise RuntimeError(leaf_message)
            return self._rebase(fn(self._snapshot(), *args, **kwargs))
        out = fn(self, *args, **kwargs)
        if _forward_ad._state.level is not None:
            _forward_ad.carry(out, self)   # the written tensor takes the result's tangent
        return self._write(out._data)

    def _rebase(self, result: "Tensor") -> "Tensor":
        """Self takes `result`'s values (into its memory) and its grad_fn: the history is rebased."""
        self._store(result._data)
        self._bump()                              # counted against the old grad_fn's saved result
        old, old_nr = self._grad_fn, self.output_nr
        self._grad_fn, self.output_nr = result._grad_fn, result.output_nr
        node = self._grad_fn
        if node is not None:
            self._keep_result(node)
            _views.follow_retain(self, old, old_nr, node)
        return self

    def add_(self, other, *, alpha=1):
        return self._arith_(np.add, F.add, other, False, alpha)

    def sub_(self, other, *, alpha=1):
        return self._arith_(np.subtract, F.sub, other, False, alpha)

    def mul_(self, other):
        return self._arith_(np.multiply, F.mul, other, True)

    def div_(self, other):
        return self._arith_(np.true_divide, F.div, other, True)

    def pow_(self, exponent):
        return self._inplace_op(F.pow, exponent)

    def clamp_(self, min=None, max=None):
        _check_bounds("clamp_", min, max)
        return self._inplace_op(F.clamp, min, max)

    def relu_(self):
        return self._inplace_op(F.relu)

    def neg_(self):
        return self._inplace_op(F.neg)

    def exp_(self):
        return self._inplace_op(F.exp)

    def log_(self):
        return self._inplace_op(F.log)

    def sqrt_(self):
        return self._inplace_op(F.sqrt)

    def abs_(self):
        return self._inplace_op(F.abs)

    def sin_(self):
        return self._inplace_op(F.sin)

    def cos_(self):
        return self._inplace_op(F.cos)

    def tanh_(self):
        return self._inplace_op(F.tanh)

    def sigmoid_(self):
        return self._inplace_op(F.sigmoid)

    def reciprocal_(self):
        return self._inplace_op(F.reciprocal)

    def masked_fill_(self, mask, value):
        if self._overlaps():   # torch still writes into an expanded tensor here, with a warning
            warnings.warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
                          "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
                          "scalar", UserWarning, stacklevel=2)
        return self._inplace_op(F.masked_fill, mask, value, overlap=True)

    def index_add_(self, dim, index, source, *, alpha=1):
        return self._inplace_op(F.index_add, dim, index, source, alpha=alpha)

    def float_power_(self, exponent):
        if self._data.dtype != np.float64:   # the result is float64, which only a float64 tensor can hold
            raise RuntimeError(f"the base given to float_power_ has dtype {dtypes.SCALAR_TYPE[self._data.dtype.name]} "
                               "but the operation's result requires dtype Double")
        return self._inplace_op(F.float_power, exponent)

    def index_fill_(self, dim, index, value):
        return self._inplace_op(F.index_fill, dim, index, value)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return self._inplace_op(F.scatter, dim, index, src, value=value, reduce=reduce)

    def scatter_add_(self, dim, index, src):
        return self._inplace_op(F.scatter_add, dim, index, src)

    def fill_diagonal_(self, fill_value, wrap=False):
        """torch's: the elements whose indices are all equal, filled through a diagonal view of self
        (so recorded as CopySlices); with wrap, a tall matrix's diagonal starts again every
        columns + 1 rows (for a contiguous one, through one strided view of its memory, as torch)."""
        shape = self._data.shape
        if len(shape) < 2:
            raise RuntimeError("dimensions must larger than 1")
        if len(shape) > 2 and any(n != shape[0] for n in shape[1:]):
            raise RuntimeError("all dimensions of input must be of equal length")
        value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
        diagonal = F.diagonal(self, 0, 0, 1)
        for _ in range(len(shape) - 2):   # pair each further dim with the diagonal so far: x[i, i, ..., i]
            diagonal = F.diagonal(diagonal, 0, 0, -1)
        diagonal.fill_(value)
        height, width = shape[0], shape[1]
        if wrap and len(shape) == 2 and height > width + 1:
            if self._data.flags.c_contiguous:   # torch's: every (width + 1)-th element of memory from there
                F.view(self, -1)[width * (width + 1)::width + 1].fill_(value)
            else:
                for start in range(width + 1, height, width + 1):
                    F.diagonal(self[start:], 0, 0, 1).fill_(value)
        return self

    # the in-place view ops change self's shape and strides, never a value
    def unsqueeze_(self, dim):
        return self._inplace_view(_shape.unsqueeze_, dim)

    def squeeze_(self, *dims, dim=None):
        return self._inplace_view(_shape.squeeze_, _squeezed_dims("squeeze_", dims, dim))

    def transpose_(self, dim0, dim1):
        return self._inplace_view(_shape.transpose_, dim0, dim1)

    swapdims_ = swapaxes_ = transpose_

    def t_(self):
        return self._inplace_view(_shape.t_)

    def _inplace_view(self, fn, *args) -> "Tensor":
        """self <- fn(self, *args), a view of self with another shape or strides (unsqueeze_,
        transpose_): nothing is written, so self takes the view's array and, when recorded, its node
        (UnsqueezeBackward1 over self's old history), and the version is bumped, as in torch. The
        leaf and view checks are _inplace_op's; a view's base keeps its history."""
        view = self._view
        if self._records():
            if view is not None:
                _views.check_view_write(self, view)
            elif self._grad_fn is None and self._requires_grad:
                raise RuntimeError(LEAF_INPLACE)
            # the node's input: self as it was (its shape, for the VJP), the same memory and version counter
            before = Tensor._make(self._data, self.grad_fn, self.output_nr)
            before._vc = self._counter()
            out = fn(before, *args)
        else:
            out = fn(self, *args)
            if _forward_ad._state.level is not None:
                _forward_ad.carry(out, self)
        self._data = out._data
        self._bump()
        node = out._grad_fn
        if node is not None:   # (retain_grad stays with the old node, as in torch: no value changed)
            self.grad_fn, self.output_nr = node, out.output_nr   # the setter keeps a view's version current
        return self

    def _assign(self, values, source=None) -> "Tensor":
        """self[...] = values with no history (no grad recorded), bumping the version; under forward AD
        self takes the tangent of `source` (the Tensor copied from), or a zero one."""
        self._writable()[...] = values
        self._bump()
        if _forward_ad._state.level is not None:
            _forward_ad.overwrite(self, source)
        return self

    def apply_(self, callable):
        """Each element replaced by callable(element), one Python call per element in order (an
        expanded tensor's shared memory is visited once per element that reads it), as torch's
        CPU loop; like torch's, it records no history and leaves the version as it was."""
        if self.requires_grad:
            raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.")
        if self.device.type != "cpu":
            raise TypeError("apply_ is only implemented on CPU tensors")
        a = self._writable()
        convert = bool if a.dtype == np.bool_ else int if a.dtype.kind in "iu" else float
        for index in np.ndindex(a.shape):
            value = callable(a[index].item())
            if not isinstance(value, dtypes.NUMBERS):
                raise TypeError(f"must be real number, not {type(value).__name__}")
            a[index] = convert(value)
        return self

    def zero_(self):
        if self._records():
            return self._inplace_op(lambda s: _apply(ZERO, (s,)), overlap=True)
        return self._assign(0)

    def fill_(self, value):
        if not isinstance(value, (Tensor,) + dtypes.NUMBERS):
            got = type(value).__name__
            raise TypeError(f"fill_() received an invalid combination of arguments - got ({got}), but expected one "
                            f"of:\n * (Tensor value)\n      didn't match because some of the arguments have invalid "
                            f"types: (!{got}!)\n * (Number value)\n      didn't match because some of the arguments "
                            f"have invalid types: (!{got}!)")
        check_int_range(value)
        value = dtypes.fitted(value, self._data.dtype)
        raw = value._data if isinstance(value, Tensor) else value
        if self._records(value):
            if isinstance(value, Tensor) and value.requires_grad:
                return self._inplace_op(lambda s, v: _apply(FILL_TENSOR, (s, _checked_fill(v, v))), value, overlap=True)
            return self._inplace_op(lambda s: _apply(FILL, (s,), (_checked_fill(value, raw),)), overlap=True)
        return self._assign(_checked_fill(value, raw))

    def copy_(self, src):
        if not isinstance(src, Tensor):   # a list or an array: torch's parser refuses it
            raise argument_error("copy_", "other", 1, "Tensor", type_name(src))
        if self._records(src) or self._carries_tangent(src):
            return self._inplace_op(lambda s, v: _apply(COPY, (s, _copy_source(s, v))), src)
        arr = backend.to_device(_copy_source(self, src)._data, self.device)
        self._check_overlap()
        return self._assign(arr.astype(self._data.dtype, copy=False), src)

    def _random_(self, op, draw) -> "Tensor":
        """Fill self from draw(n, contiguous) -> n values in torch's order (self's memory order)."""

        def sample():
            values = _random.in_memory_order(self._data, draw(self._data.size, _random.is_contiguous(self._data)))
            return backend.namespace_of(self._data).asarray(values.astype(self._data.dtype, copy=False))
        if self._records():
            return self._inplace_op(lambda s: _apply(op, (s,), (sample(),)), overlap=True)
        return self._assign(sample())

    def _float_kernel(self, kernel: str) -> None:
        if not self.dtype.is_floating_point:
            raise NotImplementedError(f'"{kernel}" not implemented for \'{_creation._KERNEL_NAMES[self.dtype.name]}\'')

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        self._float_kernel("check_uniform_bounds")
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
        g = _random._gen(generator)
        return self._random_(UNIFORM, lambda n, contiguous: _random.uniform(g, n, self._data.dtype, a, b))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        self._float_kernel("normal_kernel_cpu")
        _creation.check_std(std)
        g = _random._gen(generator)
        return self._random_(NORMAL, lambda n, contiguous: _random.normal(g, n, self._data.dtype, mean, std,
                                                                          contiguous))

    def bernoulli_(self, p=0.5, *, generator=None):
        g = _random._gen(generator)
        if isinstance(p, Tensor):
            probs = backend.to_numpy(p._data)
            if not ((probs >= 0) & (probs <= 1)).all():
                raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                                   "message be improved?  If so, please report an enhancement request to PyTorch.)")
            expanded = np.broadcast_to(probs, self.shape)
            order = _random.memory_order(self._data)
            return self._random_(BERNOULLI_TENSOR, lambda n, contiguous: _random.bernoulli_tensor(
                g, expanded.transpose(order)))
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        return self._random_(BERNOULLI, lambda n, contiguous: _random.bernoulli_scalar(g, n, p))

    def exponential_(self, lambd=1.0, *, generator=None):
        if not self.dtype.is_floating_point:
            raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                               f"floating point but you specified {_creation._KERNEL_NAMES[self.dtype.name]}")
        if not lambd > 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        g = _random._gen(generator)
        return self._random_(EXPONENTIAL, lambda n, contiguous: _random.exponential(g, n, self._data.dtype, lambd))

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        if not self.dtype.is_floating_point:
            raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a "
                               f"floating point but you specified {self._data.dtype.name}")
        if not sigma > 0:
            raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
        g = _random._gen(generator)
        return self._random_(CAUCHY, lambda n, contiguous: _random.cauchy(g, n, self._data.dtype, median, sigma))

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        self._float_kernel("log_normal_cpu")
        if not std > 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
        g = _random._gen(generator)
        return self._random_(LOG_NORMAL, lambda n, contiguous: _random.log_normal(g, n, self._data.dtype, mean,
                                                                                  std))

    def geometric_(self, p, *, generator=None):
        if not 0 < p < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
        g = _random._gen(generator)
        return self._random_(GEOMETRIC, lambda n, contiguous: _random.geometric(g, n, self._data.dtype, p))

    def random_(self, *bounds, generator=None, **named):
        """random_(to), random_(from, to) or random_(): integers drawn as torch's CPU kernel draws them."""
        if set(named) - {"from", "to"}:
            raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(set(named) - {'from', 'to'}))}'")
        bounds = bounds + tuple(named[k] for k in ("from", "to") if k in named)
        g = _random._gen(generator)
        if not bounds:
            return self._random_(RANDOM_FULL, lambda n, contiguous: _random.random_bits(g, n, self._data.dtype))
        low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
        low, high = int(low), int(high)
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        return self._random_(RANDOM_TO if len(bounds) == 1 else RANDOM_FROM_TO,
                             lambda n, contiguous: _random.integers(g, n, low, high))

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return _creation.multinomial(self, num_samples, replacement, generator=generator)

    def __setitem__(self, key, value):
        """As PyTorch: ints, slices and None pick a view of self, which is then filled (a
        0-d value) or copied into; tensor indices then index_put_ into that view."""
        if key is False or key is True:   # PyTorch's lone bools: False writes nothing, True is None
            if key is False:
                return
            key = None
        if getattr(self, "_inference", None) is WRITABLE_INFERENCE and not INFERENCE.on \
                and _index.parse_index(self._data.shape, key)[0]:
            raise RuntimeError(INFERENCE_WRITE)   # the write goes through a view of it, which torch refuses
        _check_assignable(self, key, value)
        if not self._records(value):
            if self._carries_tangent(value):
                self._inplace_op(_index.put, key, value)   # out of place, then written: the tangent follows
                return
            _index.setitem(self._writable(), key, value._data if isinstance(value, Tensor) else value)
            self._bump()
            return
        steps, basic, adv = _index.parse_index(self._data.shape, key)
        target = F.getitem(self, basic) if steps else self
        if not isinstance(value, Tensor):
            value = Tensor(value, dtype=self.dtype)
        # PyTorch views the value without its leading 1-dims first (ViewBackward0 in the graph):
        # index_put_ only when there are some, a copy whenever the shapes differ, then expands it
        stripped = _without_leading_ones(value.shape)
        if adv is not None:
            if stripped != tuple(value.shape):
                value = value.view(stripped)
            target._inplace_op(_index.put, adv, value)
        elif value.ndim == 0:
            target._inplace_op(lambda s, v: _apply(FILL_TENSOR, (s, v)), value, overlap=True)
        else:
            if tuple(value.shape) != tuple(target.shape):
                value = value.view(stripped)
                if stripped != tuple(target.shape):
                    value = value.expand(target.shape)
            target._inplace_op(lambda s, v: _apply(COPY, (s, v)), value)

    # -- operators (those that are a function of (self, other) are set below the class) ------
    def __rsub__(self, other):
        return F.rsub(self, other)

    def __rtruediv__(self, other):
        return F.mul(F.reciprocal(self if self.is_floating_point() else self.float()), other)

    def __rpow__(self, base):
        return F.pow(base, self)

    def __rmatmul__(self, other):
        return F.matmul(other, self)

    def __neg__(self):
        return F.neg(self)

    def __abs__(self):
        return F.abs(self)

    def __invert__(self):
        kind = self._data.dtype.kind
        if kind in "iu":   # bitwise not of integers, as PyTorch (no gradient)
            return Tensor._make(~self._data)
        if kind != "b":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return F.logical_not(self)

    def __eq__(self, other):
        return _compare("eq", self, other)

    def __ne__(self, other):
        return _compare("ne", self, other)

    def __lt__(self, other):
        return _compare("lt", self, other)

    def __le__(self, other):
        return _compare("le", self, other)

    def __gt__(self, other):
        return _compare("gt", self, other)

    def __ge__(self, other):
        return _compare("ge", self, other)

    def __and__(self, other):
        return _compare("bitwise_and", self, other)

    def __or__(self, other):
        return _compare("bitwise_or", self, other)

    def __xor__(self, other):
        return _compare("bitwise_xor", self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __lshift__(self, other):
        return _compare("bitwise_left_shift", self, other)

    def __rshift__(self, other):
        return _compare("bitwise_right_shift", self, other)

    def __rlshift__(self, other):   # 1 << x: the number is shifted
        return _compare("bitwise_left_shift", other, self)

    def __rrshift__(self, other):
        return _compare("bitwise_right_shift", other, self)

    def __iand__(self, other):   # &= writes into self, as torch's (Python's fallback, x = x & y, made a new tensor)
        return self.bitwise_and_(other)

    def __ior__(self, other):
        return self.bitwise_or_(other)

    def __ixor__(self, other):
        return self.bitwise_xor_(other)

    def __ilshift__(self, other):
        return self.bitwise_left_shift_(other)

    def __irshift__(self, other):
        return self.bitwise_right_shift_(other)

    def __getitem__(self, key):
        return F.getitem(self, key)

    # -- views of the matrix ------------------------------------------------------------
    @property
    def T(self):
        if self.ndim == 0:
            warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
        elif self.ndim != 2:
            warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                      "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose "
                      "batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                      "dimensions of a tensor.")
        return F.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return self._batch_transpose("mT")

    def _batch_transpose(self, name: str):
        if self.ndim < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got "
                               f"{self.ndim}-D tensor.")
        return F.transpose(self, -2, -1)

    # the conjugate transposes: every gradviz dtype is real, so they are the transposes
    @property
    def H(self):
        if self.ndim == 0:
            warn_once("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
        elif self.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
        return F.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mH(self):
        return self._batch_transpose("mH")

    def adjoint(self):
        return self.mH

    # -- methods that are the functions ------------------------------------------------------
    # -- new tensors with this one's dtype and device unless told otherwise (torch.Tensor.new_*) --
    def new(self, *args, device=None):
        """The legacy constructor, of self's dtype: x.new(2, 3) allocates (x.new(torch.Size) too), x.new([1, 2])
        takes data, x.new() is empty. Older code (and torch's own LBFGS) writes p.new(n).zero_()."""
        if len(args) == 1 and isinstance(args[0], dtypes.Size):
            args = tuple(args[0])
        device = device or self.device
        if all(type(a) is int for a in args):   # (no args: an empty tensor)
            return _creation.empty(*(args or (0,)), dtype=self.dtype, device=device)
        data = args[0]
        if len(args) > 1 or isinstance(data, Tensor) or not isinstance(data, (list, tuple)):
            raise TypeError(f"new(): data must be a sequence (got {type_name(data)})")
        return _creation.tensor(data, dtype=self.dtype, device=device)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        return _creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return _creation.new_filled("new_full", fill_value, (tuple(size),), dtype or self.dtype, device or self.device,
                          requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _creation.new_filled("new_zeros", 0, size, dtype or self.dtype, device or self.device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _creation.new_filled("new_ones", 1, size, dtype or self.dtype, device or self.device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return _creation.new_filled("new_empty", 0, size, dtype or self.dtype, device or self.device, requires_grad)

    def view(self, *shape, dtype=None, size=None):
        if dtype is not None or size is not None:   # view(dtype=...) or view(size=...): one keyword, nothing else
            if shape or (dtype is None) == (size is None):
                raise invalid_arguments("view", shape, {k: v for k, v in (("dtype", dtype), ("size", size))
                                                        if v is not None}, _VIEW_OVERLOADS)
            shape = (dtype,) if size is None else (size,)
        if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
            return _view_as_dtype(self, shape[0])
        return F.view(self, *shape)

    def reshape(self, *shape):
        return F.reshape(self, *shape)

    def view_as(self, other):
        return F.view(self, *other.shape)

    def reshape_as(self, other):
        return F.reshape(self, *other.shape)

    def expand(self, *sizes):
        return F.expand(self, *sizes)

    def expand_as(self, other):
        return F.expand(self, *other.shape)

    def repeat(self, *reps):
        if not reps:   # x.repeat() is a missing argument, not a repeat of nothing
            raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
        return F.repeat(self, *reps)

    def permute(self, *dims):
        return F.permute(self, *dims)

    def swapaxes(self, d0, d1):
        return F.transpose(self, d0, d1)

    def sum(self, dim=_ALL, keepdim=None, *, dtype=None):   # dim left out is not dim=None (F.sum)
        return F.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim=_ALL, keepdim=None, *, dtype=None):
        return F.mean(self, dim, keepdim, dtype=dtype)

    @_method_errors
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None, ddof=None):
        return F.var(self, _dim(dim, axis), unbiased, _keep(keepdim, keepdims),
                     correction=correction if ddof is None else ddof)

    @_method_errors
    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None, ddof=None):
        return F.std(self, _dim(dim, axis), unbiased, _keep(keepdim, keepdims),
                     correction=correction if ddof is None else ddof)

    def prod(self, dim=_ALL, keepdim=None, *, dtype=None):
        return F.prod(self, dim, keepdim, dtype=dtype)

    def max(self, *args, axis=None, keepdims=None, **kwargs):
        if axis is not None:
            kwargs["dim"] = axis
        if keepdims is not None:
            kwargs["keepdim"] = keepdims
        return F.max(self, *args, **kwargs)

    def min(self, *args, axis=None, keepdims=None, **kwargs):
        if axis is not None:
            kwargs["dim"] = axis
        if keepdims is not None:
            kwargs["keepdim"] = keepdims
        return F.min(self, *args, **kwargs)

    def amax(self, dim=(), keepdim=False):
        return F.amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim=False):
        return F.amin(self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return F.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return F.argmin(self, dim, keepdim)

    def norm(self, p="fro", dim=None, keepdim=False):
        return F.norm(self, p, dim, keepdim)

    def logsumexp(self, dim, keepdim=False):
        return F.logsumexp(self, dim, keepdim)

    def softmax(self, dim, dtype=None):
        return F.softmax(self, dim, dtype)

    def log_softmax(self, dim, dtype=None):
        return F.log_softmax(self, dim, dtype)

    def cumsum(self, dim, *, dtype=None):
        return F.cumsum(self, dim, dtype=dtype)

    def squeeze(self, *dims, dim=None):
        return F.squeeze(self, _squeezed_dims("squeeze", dims, dim))

    def unsqueeze(self, dim):
        return F.unsqueeze(self, dim)

    def flatten(self, start_dim=0, end_dim=-1):
        return F.flatten(self, start_dim, end_dim)

    def transpose(self, dim0, dim1):
        return F.transpose(self, dim0, dim1)

    def t(self):
        return F.t(self)

    def flip(self, *dims):
        return F.flip(self, dims[0] if len(dims) == 1 else dims)

    def split(self, split_size, dim=0):
        return F.split(self, split_size, dim)

    def chunk(self, chunks, dim=0):
        return F.chunk(self, chunks, dim)

    def unbind(self, dim=0):
        return F.unbind(self, dim)

    def clone(self, *, memory_format=None):
        return F.clone(self, memory_format=memory_format)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return F.diagonal(self, offset, dim1, dim2)

    @_method_errors
    def sort(self, dim=-1, descending=False, stable=False):
        return F.sort(self, dim, descending, stable)

    @_method_errors
    def argsort(self, dim=-1, descending=False, stable=False):
        return F.argsort(self, dim, descending, stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return F.topk(self, k, dim, largest, sorted)

    def clamp(self, min=None, max=None):
        _check_bounds("clamp", min, max)
        return F.clamp(self, min, max)

    clip = clamp

    def where(self, condition, other):
        return F.where(condition, self, other)

    def masked_fill(self, mask, value):
        return F.masked_fill(self, mask, value)

    def all(self, dim=None, keepdim=False):
        return F.all(self, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return F.any(self, dim, keepdim)

    def count_nonzero(self, dim=None):
        return F.count_nonzero(self, dim)

    def cumprod(self, dim, *, dtype=None):
        return F.cumprod(self, dim, dtype=dtype)

    def median(self, dim=None, keepdim=False):
        return F.median(self, dim, keepdim)

    def aminmax(self, *, dim=None, keepdim=False):
        return F.aminmax(self, dim=dim, keepdim=keepdim)

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        return F.diff(self, n, dim, prepend, append)

    def tril(self, diagonal=0):
        return F.tril(self, diagonal)

    def triu(self, diagonal=0):
        return F.triu(self, diagonal)

    def diag(self, diagonal=0):
        return F.diag(self, diagonal)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        return F.diag_embed(self, offset, dim1, dim2)

    def broadcast_to(self, size):
        return F.broadcast_to(self, size)

    def movedim(self, source, destination):
        return F.movedim(self, source, destination)

    moveaxis = movedim

    def swapdims(self, d0, d1):
        return F.transpose(self, d0, d1)

    def narrow(self, dim, start, length):
        return F.narrow(self, dim, start, length)

    def select(self, dim, index):
        return F.select(self, dim, index)

    def take_along_dim(self, indices, dim=None):
        return F.take_along_dim(self, indices, dim)

    def masked_select(self, mask):
        return F.masked_select(self, mask)

    def nonzero(self, *, as_tuple=False):
        return F.nonzero(self, as_tuple=as_tuple)

    def roll(self, shifts, dims=None):
        return F.roll(self, shifts, dims)

    def tile(self, dims):
        return F.tile(self, dims)

    def index_fill(self, dim, index, value):
        return F.index_fill(self, dim, index, value)

    def scatter(self, dim, index, src=None, *, value=None):
        return F.scatter(self, dim, index, src, value=value)

    def lerp(self, end, weight):
        return F.lerp(self, end, weight)

    def addcmul(self, tensor1, tensor2, *, value=1):
        return F.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        return F.addcdiv(self, tensor1, tensor2, value=value)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return F.nan_to_num(self, nan, posinf, neginf)

    def logit(self, eps=None):
        return F.logit(self, eps)

    def dist(self, other, p=2):
        return F.dist(self, other, p)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return F.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return F.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def bernoulli(self, p=None, *, generator=None):
        return _creation.bernoulli(self, p, generator=generator)


def _copy_source(dst, src):
    """copy_'s source, once the write is known to be allowed: it must broadcast to the destination."""
    if (shape := broadcast_shape(dst._data.shape, src._data.shape)) != dst._data.shape:
        raise RuntimeError(f"output with shape {list(dst._data.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}")
    return src


def _checked_fill(value, result):
    """result, once fill_'s value (checked after the write is known to be allowed) is not a tensor of
    one or more dimensions."""
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           "dimensions.")
    return result


def _view_as_dtype(t: Tensor, dtype) -> Tensor:
    """x.view(dtype): the same bytes read as another dtype (the last dim rescaled when the element
    sizes differ), sharing memory; torch records no gradient through it."""
    a, old = t._data, t._data.dtype
    names = f"{dtypes.SCALAR_TYPE[old.name]} as {dtypes.SCALAR_TYPE[dtype.np.name]}"
    if old.itemsize != dtype.np.itemsize:
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names} (different element sizes)")
        stride = a.strides[-1] // old.itemsize if a.shape[-1] > 1 else 1
        if stride != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names} (different element sizes), but got "
                               f"{stride}")
        ratio = dtype.np.itemsize // old.itemsize
        if ratio > 1 and a.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {names} (different element "
                               f"sizes), but got {a.shape[-1]}")
        if not a.flags.c_contiguous:   # NumPy reinterprets only a contiguous last axis of a contiguous array
            raise RuntimeError(f"view {names} (different element sizes) of a non-contiguous tensor is not "
                               "supported; call .contiguous() first")
    view = Tensor._make(a.view(dtype.np))
    view._vc = t._counter()   # one storage, one version counter: a write through either is seen by both
    return view


_VIEW_OVERLOADS = ("torch.dtype dtype", "tuple of ints size")


def _squeezed_dims(name: str, dims: tuple, dim):
    """squeeze's dims given as squeeze(0), squeeze(0, 1), squeeze((0, 1)) or squeeze(dim=...): None for
    every dim of size one. torch's method takes several dims one by one (its function does not)."""
    if dims and dim is not None:
        raise invalid_arguments(name, dims, {"dim": dim}, ("", "int dim", "tuple of ints dim"))
    return dim if not dims else dims[0] if len(dims) == 1 else dims


def _dim(dim, axis):
    return axis if dim is None else dim


def _keep(keepdim, keepdims):
    return keepdim if keepdims is None else keepdims


def _bind(methods: type) -> None:
    for name, value in vars(methods).items():
        if name in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__") or \
                (name == "__hash__" and value is None):   # a class body with __eq__ gets __hash__ = None
            continue
        fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        while hasattr(fn, "__qualname__"):   # the method and what it wraps: Python's own errors name Tensor.name()
            fn.__qualname__ = f"Tensor.{name}"
            fn = getattr(fn, "__wrapped__", None)
        setattr(Tensor, name, value)


# -- binding -------------------------------------------------------------------------------
_bind(_Methods)
# The `xp` of the VJP rules on Tensors (create_graph) and of the JVP rules (forward-mode AD): the
# engine reads it from the class, as it calls any other method of a Tensor.
Tensor._namespace = TENSOR

# The methods call the functions as written: they pass neither NumPy's names nor out=, so the
# calling conventions' wrappers would only cost a call.
F = types.SimpleNamespace(**{_name: plain(_fn) for _name, _fn in vars(_functions).items()
                             if not _name.startswith("__")})

for _name, _fn in _declared_methods().items():   # the methods the op records and @public functions declare
    setattr(Tensor, _name, _method(_fn, _name))


def _inplace(name: str):
    """Tensor.NAME_: self <- self.NAME(...), written into self's memory (the history rebased when recorded)."""
    def method(self, *args, **kwargs):
        try:
            return self._inplace_op(getattr(Tensor, name), *args, **kwargs)   # (some are bound later, by gradviz)
        except TypeError as error:   # torch's parser names the in-place method
            argument = getattr(error, "argument", None)
            if argument is None or argument[0] != name:
                raise
            raise argument_error(name + "_", *argument[1:]) from None
    method.__name__ = method.__qualname__ = name + "_"
    return method


# torch's in-place forms of methods that are a value of self alone (or of self and other operands of its shape)
_INPLACE = ("absolute", "acos", "acosh", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "arccos", "arccosh",
            "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "asin", "asinh", "atan", "atan2", "atanh", "baddbmm",
            "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "clamp_max", "clamp_min", "clip",
            "copysign", "cosh", "cumprod", "cumsum", "deg2rad", "digamma", "divide", "eq", "erf", "erfc", "erfinv",
            "exp2", "expm1", "fix", "floor", "floor_divide", "fmod", "frac", "gcd", "ge", "greater", "greater_equal", "gt",
            "heaviside", "hypot", "index_copy", "lcm", "ldexp", "le", "lerp", "less", "less_equal", "lgamma", "log10", "log1p", "log2",
            "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "lt", "masked_scatter", "multiply", "mvlgamma",
            "nan_to_num", "ne", "negative", "not_equal", "polygamma", "rad2deg", "remainder", "renorm", "round", "rsqrt", "scatter_reduce", "sgn",
            "sign", "sinc", "sinh", "square", "subtract", "tan", "tril", "triu", "true_divide", "trunc", "xlogy")
for _name in _INPLACE:
    if not hasattr(Tensor, _name + "_"):
        setattr(Tensor, _name + "_", _inplace(_name))


def _converter(dtype, name: str):
    """Tensor.NAME(): self as `dtype` (x.short(), x.byte(), x.char())."""
    def convert(self, memory_format=None):
        return self.to(dtype, memory_format=memory_format)
    convert.__name__ = convert.__qualname__ = name
    return convert


for _name, _dtype in (("short", dtypes.int16), ("byte", dtypes.uint8), ("char", dtypes.int8)):
    setattr(Tensor, _name, _converter(_dtype, _name))


def _operands_only(method, name: str):
    """An operator dunder that leaves operands PyTorch does not take (None, str, list, ...) to Python,
    which then raises its TypeError ("unsupported operand type(s)"), as it does for torch.Tensor."""
    record = _SAME_DTYPE_RECORDS.get(name)
    # @ takes tensors only: torch's matmul raises TypeError for anything else, which its @ turns into NotImplemented
    # a NumPy array is left to NumPy, as torch leaves it: t + array is NumPy's sum (array + t then fails)
    operands = Tensor if name in ("__matmul__", "__rmatmul__") else (Tensor, int, float, np.generic)

    def dunder(self, other):
        if record is not None and type(other) is Tensor and (dtype := self._data.dtype) is other._data.dtype \
                and dtype.kind == "f":
            return _apply(record, (self, other))
        if not isinstance(other, operands):
            if type(other) is not np.ndarray:
                return NotImplemented
            if name == "__eq__":   # torch's == compares with an array elementwise (its other operators do not)
                other = Tensor._make(other)
            elif not _formula.active:   # (a VJP rule on Tensors may meet its array params)
                return NotImplemented
        return method(self, other)
    dunder.__name__ = name
    return dunder

# Two floating tensors of one dtype leave add, sub, mul and div nothing to promote, coerce or
# check: these operators then run the record at once (one call fewer on the commonest ops).
_SAME_DTYPE_RECORDS = {"__add__": _pointwise.ADD, "__sub__": _pointwise.SUB, "__mul__": _pointwise.MUL,
                       "__truediv__": _pointwise.DIV}

# The operators that are a function of (self, other), wrapped directly: one call per op fewer.
# As in torch, 2 + x is x.add(2), so x is input 0 of AddBackward0.
_FUNCTION_OPERATORS = {"__add__": F.add, "__radd__": F.add, "__sub__": F.sub, "__mul__": F.mul, "__rmul__": F.mul,
                       "__truediv__": F.div, "__floordiv__": F.floor_divide, "__mod__": F.remainder,
                       "__pow__": F.pow, "__matmul__": F.matmul}

for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__mod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__eq__", "__ne__",
              "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__", "__xor__", "__rand__", "__ror__",
              "__rxor__", "__lshift__", "__rshift__", "__rlshift__", "__rrshift__", "__iand__", "__ior__", "__ixor__",
              "__ilshift__", "__irshift__",
              "__iadd__", "__isub__", "__imul__", "__itruediv__"):
    setattr(Tensor, _name, _operands_only(_FUNCTION_OPERATORS.get(_name) or getattr(Tensor, _name), _name))


def _check_assignable(tensor: Tensor, key, value) -> None:
    """PyTorch's errors for x[key] = value, raised before anything is written: a value that is not
    a tensor or a number (a list, an array, None, a str, ...), an int no int64 holds, one value for a
    lone byte mask (see parse_index), or a value that does not expand to the indexed region."""
    if not isinstance(value, (Tensor,) + dtypes.NUMBERS) or backend.is_array(value):
        raise TypeError(f"can't assign a {type_name(value)} to a "
                        f"torch.{dtypes.SCALAR_TYPE.get(tensor._data.dtype.name, '')}Tensor")
    if type(value) is int and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    _, basic, adv = _index.parse_index(tensor._data.shape, key, fill=(value.numel() if isinstance(value, Tensor)
                                                                else np.size(value)) == 1)
    shape = getattr(value, "shape", None)
    if shape is None:
        return
    region = np.broadcast_to(np.empty((), dtype=bool), tensor._data.shape)   # no copy: only its shape is read
    region = region[basic] if basic else region
    region = region[adv] if adv is not None else region
    shape = _without_leading_ones(shape)
    if adv is not None:   # index_put_ broadcasts the value against the indexed region
        try:
            np.broadcast_shapes(shape, region.shape)
            fits = np.broadcast_shapes(shape, region.shape) == region.shape
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(shape)} cannot be broadcast to "
                               f"indexing result of shape {list(region.shape)}")
        return
    value_type = f"torch.{dtypes.SCALAR_TYPE.get(str(value.dtype).replace('torch.', ''), '')}Tensor"
    message = expand_error(shape, tuple(region.shape), value_type)
    if message:
        raise RuntimeError(message)

def _without_leading_ones(shape) -> tuple:
    """A value's shape as PyTorch's setitem reads it: its leading 1-dims dropped (slicePrefix1sSize)."""
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape

Tensor.polygamma = lambda self, n: F.polygamma(n, self)