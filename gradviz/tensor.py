"""Tensor: an array plus autograd metadata (grad, grad_fn, requires_grad, is_leaf).

The class and the methods that need nothing above the arrays; the methods that are torch's
functions (x.exp()) or reach the engine (x.backward()) are bound by gradviz.tensor_methods, which
gradviz/__init__.py loads right after this module. This module holds no math of its own.
"""
from __future__ import annotations

import operator
import threading
import warnings

import numpy as np
from numpy import ndarray   # one global load where np.ndarray is two, on the per-op path

from . import backend, dtypes
from ._args import argument_error, is_number, type_name
from ._warn import warn_once
from . import code_lines as _code_lines
from ._calling import numpy_names

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


def _dim_arg(fn: str, dim, ndim: int) -> int:
    """A method's one dim argument, with torch's errors: an int (or what indexes as one) in
    [-ndim, ndim), and none on a 0-d tensor."""
    if isinstance(dim, (bool, np.bool_)) or not hasattr(dim, "__index__"):
        raise TypeError(f"{fn}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    dim = operator.index(dim)
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim


def _to_array(data, dtype=None, device=None):
    """Python data / numpy / cupy / Tensor -> an array with PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        data = data._data
    np_dtype = dtypes.as_np(dtype) if dtype is not None else None
    if isinstance(data, (np.ndarray, np.generic)) or (backend._cupy is not None
                                                      and isinstance(data, backend._cupy.ndarray)):
        arr = np.asarray(data) if isinstance(data, np.generic) else data   # NumPy scalars keep their dtype
        if np_dtype is not None:
            arr = arr.astype(np_dtype)
    else:
        if data is None:
            raise RuntimeError("Could not infer dtype of NoneType")
        if isinstance(data, str):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if isinstance(data, (list, tuple)) and any(isinstance(x, str) for x in _flat(data)):
            # torch reads the shape from the first items down: a str there is one more dimension
            if isinstance(next(_flat(data)), str):
                raise ValueError("too many dimensions 'str'")
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(data, (list, tuple)) and data and isinstance(data[0], ndarray):
            warn_once("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting "
                      "the list to a single numpy.ndarray with numpy.array() before converting to a tensor.")
        if isinstance(data, (list, tuple)) and any(isinstance(x, (Tensor, np.generic, ndarray)) for x in _flat(data)):
            np_dtype = np_dtype if np_dtype is not None else _nested_dtype(data)
            if np_dtype is not None and np_dtype.kind in "iu" and any(
                    isinstance(x, Tensor) and x._data.dtype.kind == "f" for x in _flat(data)):
                raise TypeError("only integer tensors of a single element can be converted to an index")
            data = _unwrap_nested(data)
        if isinstance(data, (list, tuple)) and any(x is None for x in _flat(data)):
            raise RuntimeError("Could not infer dtype of NoneType")
        try:
            arr = np.asarray(data)
        except ValueError:
            _raise_ragged(data)
        if arr.dtype == object and isinstance(data, (list, tuple)):
            arr = _numbers_beyond_int64(data)
        if arr.dtype.kind in "iuO" and _too_big(arr) or (
                arr.dtype.kind == "f" and isinstance(data, (list, tuple)) and _only_ints(data)):
            raise ValueError("Overflow when unpacking long long")
        if np_dtype is not None:
            python_numbers = isinstance(data, (list, tuple, int, float))   # an array's values wrap, as in torch
            if np_dtype.kind in "iub" and arr.dtype.kind == "f" and not np.isfinite(arr).all() or (
                    python_numbers and dtypes.overflows(arr, np_dtype)):
                raise RuntimeError(f"value cannot be converted to type {np_dtype} without overflow")
            arr = arr.astype(np_dtype)
        elif arr.dtype.kind == "f":
            arr = arr.astype(dtypes.get_default_dtype().np)   # Python floats: the default dtype
        elif arr.dtype.kind in "iu":
            arr = arr.astype(np.int64)
        elif arr.dtype.kind not in "b":
            raise RuntimeError(f"Could not infer dtype of {type_name(data)}")
    dtypes.from_numpy_dtype(arr.dtype)   # raises for unsupported dtypes
    if device is None:
        device = backend.default_device()   # set_default_device / `with torch.device(...)`
    if device is not None:
        arr = backend.to_device(arr, device)
    return arr


def _raise_ragged(data):
    """PyTorch's errors for nested lists of uneven lengths or of sequences mixed with numbers."""
    level = [data]
    dim = 0
    while level and all(isinstance(x, (list, tuple)) for x in level):
        lengths = [len(x) for x in level]
        for n in lengths:
            if n != lengths[0]:
                raise ValueError(f"expected sequence of length {lengths[0]} at dim {dim} (got {n})") from None
        level = [y for x in level for y in x]
        dim += 1
    nested = [isinstance(x, (list, tuple)) for x in level]
    if any(nested):   # torch reads the first element's kind, then fails on the first that differs
        if nested[0]:
            raise TypeError("not a sequence") from None
        raise TypeError(f"'{type(level[nested.index(True)]).__name__}' object cannot be interpreted as an "
                        "integer") from None
    for x in level:   # an element that is no number (a dict, an object)
        if not is_number(x):
            raise RuntimeError(f"Could not infer dtype of {type_name(x)}") from None
    raise ValueError("could not build a tensor from ragged nested sequences") from None


def _only_ints(data) -> bool:
    """Python ints (and bools) only, at least one: NumPy made floats of them because one was beyond int64.
    Read up to the first other number (a list of floats stops at its first)."""
    found = False
    for v in _flat(data):
        if not isinstance(v, int):
            return False
        found = True
    return found


def _numbers_beyond_int64(data):
    """The array of nested Python numbers NumPy kept as objects (an int beyond int64 among them):
    floats where a float is among them (torch converts every number), else torch's overflow."""
    leaves = list(_flat(data))
    if not all(isinstance(v, (int, float)) for v in leaves):
        _raise_ragged(data)
    if any(isinstance(v, float) for v in leaves):
        return np.array(data, dtype=np.float64)
    raise ValueError("Overflow when unpacking long long")


def _too_big(arr) -> bool:
    """Python ints beyond int64 (NumPy would make uint64 or object arrays of them)."""
    if arr.dtype.kind == "u":
        return arr.dtype.itemsize == 8 and arr.size > 0 and int(arr.max()) > np.iinfo(np.int64).max
    if arr.dtype == object:
        return any(isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63 for v in arr.reshape(-1))
    return False


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _nested_dtype(data):
    """torch's dtype for nested lists holding tensors or NumPy values: each tensor, NumPy scalar or array
    counts with its own dtype (np.float64(1.5) as float64), a Python bool, int or float as bool, int64 or
    the default dtype, all promoted together (None: NumPy decides)."""
    kinds = []
    for x in _flat(data):
        if isinstance(x, Tensor):
            kinds.append(x._data.dtype)
        elif isinstance(x, (np.generic, ndarray)):   # before float: np.float64 is a float too
            kinds.append(x.dtype)
        elif isinstance(x, (bool, int, float)):
            kinds.append(np.dtype(bool) if isinstance(x, bool) else np.dtype(np.int64) if isinstance(x, int)
                         else dtypes.get_default_dtype().np)
        else:
            return None
    return dtypes.promote_types_all(kinds)


def _unwrap_nested(data):
    """Tensors inside nested lists are read as torch reads them, each as one number (its 0-d array)."""
    if isinstance(data, Tensor):
        if data._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return backend.to_numpy(data._data).reshape(())
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(x) for x in data]
    return data


_new_object = object.__new__   # bound once: Tensor._make runs once per op
_HALF = dtypes.float16.np   # float16 arithmetic with a number reads it as torch's kernels (see coerce_pair)


class _InferenceMode(threading.local):
    """Whether torch.inference_mode is on in this thread (gradviz.autograd's inference_mode sets it):
    a tensor made while it is on is an inference tensor, as torch's are."""
    on = False


class InferenceTensors:
    """Process-wide, in class attributes (cheaper to read than a thread's): `made` turns on with the
    first inference tensor, and until then the write and recording paths skip their checks for one."""
    made = False
    lock = threading.Lock()


def inherit_inference(source, alias, writable: bool = False) -> None:
    """An alias of `source` (a view, detach(), .data) is an inference tensor when source is one, in
    or out of the mode; made in the mode, that of a normal tensor is normal. torch gives detach()
    and .data their own version counter, so those (writable=True) may be written outside the mode,
    where a view, sharing its base's lack of one, may not."""
    if getattr(source, "_inference", False):
        alias._inference = WRITABLE_INFERENCE if writable else True
    elif INFERENCE.on and hasattr(alias, "_inference"):
        del alias._inference


WRITABLE_INFERENCE = "writable"   # the _inference mark of detach() and .data of an inference tensor

# inference_mode contexts open in any thread: a tensor being made reads its thread's mode only while
# there is one (a module global: one load per tensor made)
inference_contexts = 0


INFERENCE = _InferenceMode()
INFERENCE_WRITE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
                   "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
                   "for more details.")
INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                   "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                   "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                   "`torch.inference_mode()`.")


@numpy_names   # x.sum(axis=0, keepdims=True): torch's methods take NumPy's names too
class Tensor:
    """A multi-dimensional array that records the ops applied to it."""

    __slots__ = ("_data", "_grad", "_grad_fn", "output_nr", "_requires_grad", "_accum", "name", "_vc", "_view",
                 "_wrapped", "_inference", "__weakref__", "__dict__")
    # _wrapped: set (True) only on a Python number made a 0-d operand; __dict__: a learner's own
    # attributes (t.g = ...), as torch's tensors take them
    __array_priority__ = 1000   # numpy scalars defer to Tensor's reflected operators
    __module__ = "gradviz"   # <class 'gradviz.Tensor'>, as torch's is <class 'torch.Tensor'>

    def __init__(self, *args, dtype=None, device=None, requires_grad=False, name=None):
        # torch.Tensor's legacy constructor: Tensor(2, 3) allocates, Tensor([1, 2]) is of the
        # default dtype; arrays and tensors keep their dtype.
        if args and all(type(a) is int for a in args) and (len(args) > 1 or dtype is None):
            data = np.zeros(args, dtype=dtypes.as_np(dtype) if dtype is not None else
                            dtypes.get_default_dtype().np)
        else:
            if len(args) > 1:
                raise TypeError(f"Tensor() takes one data argument or integer sizes, got {len(args)} arguments")
            data = args[0] if args else ()
            if dtype is None and not isinstance(data, (np.ndarray, np.generic, Tensor)) and not (
                    backend._cupy is not None and isinstance(data, backend._cupy.ndarray)):
                dtype = dtypes.get_default_dtype()
        self._data = _to_array(data, dtype, device)
        self._grad = None
        self._grad_fn = None
        self._view = None
        self.output_nr = 0
        self._requires_grad = False
        self._accum = None
        self.name = name
        self._vc = 0
        if inference_contexts and INFERENCE.on:
            self._inference = InferenceTensors.made = True
        if requires_grad:
            self._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")

    @classmethod
    def _from_data(cls, data, dtype=None, device=None, requires_grad=False) -> "Tensor":
        """torch.tensor(data): the dtype inferred from the data (ints stay int64)."""
        t = cls._make(_to_array(data, dtype, device))
        if requires_grad:
            t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
        return t

    @classmethod
    def _make(cls, data, grad_fn=None, output_nr=0):
        """The fast constructor used by ops: no inference, no checks."""
        t = _new_object(cls)
        if type(data) is not ndarray:
            data = np.asarray(data) if isinstance(data, (np.generic, float, int, bool)) else data
        t._data = data
        t._grad = None
        t._grad_fn = grad_fn
        t._view = None
        t.output_nr = output_nr
        t._requires_grad = False
        t._accum = None
        t.name = None
        t._vc = 0
        if inference_contexts and INFERENCE.on:   # an inference tensor (the slot stays unset otherwise)
            t._inference = InferenceTensors.made = True
        return t

    @property
    def _base(self):
        """The tensor this one is a view of (the root of a chain of views), else None."""
        view = self._view
        return None if view is None else view.base

    def _is_view(self) -> bool:
        return self._view is not None

    @property
    def requires_grad(self) -> bool:
        if self._requires_grad or self._grad_fn is not None:
            return True
        view = self._view
        return view is not None and view.base.requires_grad   # a view of a base that requires grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self.grad_fn is not None:   # requires_grad_() lets this pass; the attribute does not
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype can require gradients")

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        return self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require gradients")

    def _set_requires_grad(self, requires_grad: bool, int_message: str) -> "Tensor":
        # PyTorch words the integer-dtype error differently for requires_grad_() and for the
        # requires_grad= argument / attribute; both are mirrored.
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use "
                                   "a computed variable in a subgraph that doesn't require differentiation use "
                                   "var_no_grad = var.detach().")
            return self
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(int_message)
        if requires_grad and not INFERENCE.on and getattr(self, "_inference", False):
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        if requires_grad and _code_lines.tracking_sources:
            _code_lines.remember_leaf_source(self, 2)   # the line that made this leaf: its AccumulateGrad's line
        return self

    @property
    def grad(self):
        g = self._grad
        if g is None and self.grad_fn is not None and not self.retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                                   f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                                   f"the same size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{dtypes.C_TYPE[value._data.dtype.name]}' to a tensor "
                    f"with grad_dtype '{dtypes.SCALAR_TYPE[self._data.dtype.name]}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                    "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with caution. "
                    "Diverging the dtypes of a tensor and its gradient may break downstream systems that assume they "
                    "match.")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    # -- the version counter: bumped by every in-place write -----------------------------
    # _vc is 0 for a tensor never written in place (almost all of them, at no cost) and a
    # VersionCounter from its first in-place write on (shared with its detach()es).
    @property
    def _version(self) -> int:
        counter = self._vc
        return counter.version if counter else 0

    def _bump(self) -> None:
        (self._vc or self._counter()).bump()

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def _edge(self) -> tuple:
        node = self._grad_fn if self._view is None else self.grad_fn
        if node is not None:
            return (node, self.output_nr)
        if self._requires_grad:
            return (self._accumulator(), 0)
        return (None, 0)

    @property
    def data(self) -> "Tensor":
        """The same storage, detached from the graph."""
        t = Tensor._make(self._data)
        if InferenceTensors.made:
            inherit_inference(self, t, writable=True)
        return t

    @data.setter
    def data(self, value) -> None:
        self._data = value._data if isinstance(value, Tensor) else _to_array(value)

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return bool(node is not None and node.hooks is not None and self.output_nr in node.hooks.retains)

    def retain_grad(self) -> None:
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        self.grad_fn._retain(self.output_nr, self)

    def register_hook(self, hook):
        """hook(grad) -> Tensor or None runs when this tensor's gradient is computed."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn if self.grad_fn is not None else self._accumulator()
        return node._add_tensor_hook(self.output_nr, hook)

    def detach(self) -> "Tensor":
        """Same storage and, as in PyTorch, the same version counter (unlike .data)."""
        t = Tensor._make(self._data)
        t._vc = self._counter()
        if InferenceTensors.made:
            inherit_inference(self, t, writable=True)
        return t

    # -- metadata --------------------------------------------------------------------
    @property
    def shape(self) -> dtypes.Size:
        return dtypes.Size(self._data.shape)

    def size(self, dim=None):
        shape = self._data.shape
        if dim is None:
            return dtypes.Size(shape)
        if type(dim) is not int or not -len(shape) <= dim < len(shape):
            dim = _dim_arg("size", dim, len(shape))
        return shape[dim]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        return backend.device_of(self._data)

    @property
    def layout(self):
        return dtypes.strided   # every gradviz tensor is dense

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    # every gradviz tensor is dense, real and unquantized, in plain memory: code written for torch's
    # other kinds asks (a hand-written optimizer's `if grad.is_sparse: raise ...`), and reads False
    is_sparse = is_sparse_csr = is_quantized = is_meta = is_nested = is_mkldnn = property(lambda self: False)
    is_mps = is_xpu = is_xla = is_ipu = is_vulkan = is_mtia = is_maia = property(lambda self: False)

    def is_conj(self) -> bool:
        return False

    def is_neg(self) -> bool:
        return False

    def is_pinned(self, device=None) -> bool:
        return False

    def conj(self) -> "Tensor":
        """A real tensor is its own conjugate (torch returns the tensor itself)."""
        return self

    resolve_conj = resolve_neg = conj

    @property
    def real(self) -> "Tensor":
        return self

    @property
    def imag(self):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __hash__(self):
        return id(self)

    # -- conversion ------------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return backend.to_numpy(self._data).reshape(()).item()

    def tolist(self):
        return backend.to_numpy(self._data).tolist()

    def __int__(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no' if self._data.size == 0 else 'more than one'} "
                               f"value{'s' if self._data.size == 0 else ''} is ambiguous")
        return bool(self.item())

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()   # as torch: a tensor that requires grad (or lives on a GPU) is refused
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """What NumPy hands back from a ufunc on a tensor (np.exp(t), np.maximum(t, 0)): a tensor, as
        torch gives; a bool result comes as uint8, as torch's does."""
        array = np.asarray(array)
        return Tensor._make(array.astype(np.uint8) if array.dtype == np.bool_ else array)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else f"cuda:{device}")

    def float(self, memory_format=None):
        return self.to(dtypes.float32, memory_format=memory_format)

    def double(self, memory_format=None):
        return self.to(dtypes.float64, memory_format=memory_format)

    def half(self, memory_format=None):
        return self.to(dtypes.float16, memory_format=memory_format)

    def long(self, memory_format=None):
        return self.to(dtypes.int64, memory_format=memory_format)

    def int(self, memory_format=None):
        return self.to(dtypes.int32, memory_format=memory_format)

    def bool(self, memory_format=None):
        return self.to(dtypes.bool_, memory_format=memory_format)

    def type(self, dtype=None, non_blocking=False):
        """The legacy type name ('torch.FloatTensor'), or self converted to a dtype, to a legacy type by
        name ('torch.DoubleTensor', 'torch.cuda.FloatTensor') or to a legacy class (torch.LongTensor)."""
        cuda = "cuda." if self.device.type == "cuda" else ""
        if dtype is None:
            return f"torch.{cuda}{dtypes.SCALAR_TYPE[self.dtype.name]}Tensor"
        if isinstance(dtype, str):
            name = dtype.replace("torch.cuda.", "torch.", 1)
            by_name = {f"torch.{t}Tensor": n for n, t in dtypes.SCALAR_TYPE.items()}
            by_name["torch.Tensor"] = dtypes.get_default_dtype().name
            if name not in by_name:
                raise ValueError(f"invalid type: '{dtype}'")
            target = dtypes.from_numpy_dtype(np.dtype(by_name[name]))
            device = "cuda" if dtype.startswith("torch.cuda.") else self.device
            return self if target is self.dtype and device == self.device else self.to(device, target)
        if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), dtypes.dtype):   # torch.LongTensor
            dtype = dtype.dtype
        elif isinstance(dtype, type):
            raise ValueError(f"invalid type: '{dtype.__name__}'")
        elif not isinstance(dtype, dtypes.dtype):
            raise TypeError("dtype must be a type, str, or dtype object")
        return self.to(dtype)

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim=None):
        """torch's strides, in elements: the array's byte strides over its item size. Where NumPy's
        strides carry no information, torch's rule gives them: an empty tensor has contiguous strides,
        and a dim of size 1 that NumPy gives stride 0 (a broadcast) has the size times the stride of
        the dim after it (1 for the last), as torch's unsqueeze and expand give it."""
        a = self._data
        shape = a.shape
        if a.size == 0:
            strides, step = [], 1
            for n in reversed(shape):
                strides.append(step)
                step *= n if n > 1 else 1
            strides = tuple(reversed(strides))
        else:
            strides = [s // a.itemsize for s in a.strides]
            for d in range(len(shape) - 1, -1, -1):
                if shape[d] == 1 and strides[d] == 0:
                    strides[d] = shape[d + 1] * strides[d + 1] if d + 1 < len(shape) else 1
            strides = tuple(strides)
        return strides if dim is None else strides[_dim_arg("stride", dim, a.ndim)]

    def element_size(self) -> int:
        """Bytes per element (4 for float32)."""
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.size * self._data.itemsize

    def is_inference(self) -> bool:
        """Was self made inside torch.inference_mode?"""
        return bool(getattr(self, "_inference", False))

    def get_device(self) -> int:
        """-1 on the CPU, else the GPU's index, as torch numbers them."""
        device = self.device
        return -1 if device.type == "cpu" else (device.index or 0)

    def type_as(self, other) -> "Tensor":
        """self converted to other's dtype and device (self itself when they match already)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return self.to(device=other.device, dtype=other.dtype)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def _snapshot(self) -> "Tensor":
        return Tensor._make(self._data.copy(), self.grad_fn, self.output_nr)

    def _overlaps(self) -> bool:
        """Do some of self's elements share memory (an expand)?"""
        a = self._data
        return a.base is not None and 0 in a.strides and any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape))

    def _check_overlap(self) -> None:
        """PyTorch refuses most in-place writes into a tensor whose elements share memory."""
        if self._overlaps():
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")

    def _check_cast(self, src) -> None:
        if src.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                               f"{list(src.shape)}")
        if src.dtype != self._data.dtype and dtypes._category(src.dtype) > dtypes._category(self._data.dtype):
            raise RuntimeError(f"result type {dtypes.SCALAR_TYPE[src.dtype.name]} can't be cast to the desired output "
                               f"type {dtypes.SCALAR_TYPE[self._data.dtype.name]}")

    def _store(self, src) -> None:
        """Write the array `src` into self's memory (checked first: nothing half-written)."""
        self._check_cast(src)
        self._writable()[...] = src

    def _writable(self):
        """self's array, made writable: a read-only NumPy view of writable memory is opened;
        memory nobody may write (a read-only array from the user) is replaced by a copy."""
        if not INFERENCE.on and getattr(self, "_inference", False) is True:
            raise RuntimeError(INFERENCE_WRITE)   # checked before any write: nothing half-written
        a = self._data
        if not backend.writeable(a):
            try:
                a.setflags(write=True)
            except ValueError:
                a = self._data = a.copy()
        return a

    def _write(self, src) -> "Tensor":
        """Write the array `src` into self's storage (no history) and bump the version."""
        self._store(src)
        self._bump()
        return self

    def _keep_result(self, node) -> None:
        """The new node saved its result, which is self (its memory) from now on."""
        if node.op.n_outputs == 1 and "result" in node.op.saves:
            if node.out_data is not None and node.out_data.dtype == self._data.dtype:
                node.out_data = self._data
            node.result_counter = self._counter()
            node.result_version = self._version

    def _arith_(self, ufunc, fn, other, opmath: bool = False, alpha=1) -> "Tensor":
        """In-place arithmetic: straight into the array (one pass, like NumPy's -=) when no
        graph is being recorded and no tangent carried, else through the op so the history is rebased.
        `opmath`: a number multiplies or divides float16 in float32, as torch's kernels (see coerce_pair).
        `alpha` (add_, sub_): self ± α other, recorded as one node with α a parameter, as torch records it;
        float16 always through the op, which rounds α other + self once as torch's kernel."""
        if not isinstance(other, Tensor) and not is_number(other):   # a list or an array: torch's parser refuses it
            raise argument_error(fn.__name__ + "_", "other", 1, "Tensor", type_name(other))
        if alpha != 1:
            if self._data.dtype is _HALF or self._records(other) or self._carries_tangent(other):
                # one node with α (a one-element tensor read as its number, as torch's parser reads a Scalar)
                return self._inplace_op(fn, other, alpha=alpha.item() if isinstance(alpha, Tensor) else alpha)
            other = other * alpha   # nothing recorded: α other, then written in as below
        if not self._records(other) and not self._carries_tangent(other):
            arr = other._data if isinstance(other, Tensor) else \
                np.float32(other) if opmath and self._data.dtype is _HALF else other
            self._check_overlap()
            inference = InferenceTensors.made and getattr(self, "_inference", False) is True
            if backend.writeable(self._data) and not inference:   # an inference tensor: _writable refuses
                try:
                    ufunc(self._data, arr, out=self._data, casting="same_kind")
                except (TypeError, ValueError):   # casting or broadcasting: let the op say it
                    return self._write(fn(self, other)._data)
                self._bump()
                return self
        return self._inplace_op(fn, other)

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def __pos__(self):
        return self

    def equal(self, other) -> bool:
        return self.shape == other.shape and bool((self._data == other._data).all())


def zero_grads(tensors, set_to_none: bool = True) -> None:
    """What Module.zero_grad and Optimizer.zero_grad do to each tensor's .grad: drop it, or
    detach it from any graph it has and fill it with zeros in place."""
    for t in tensors:
        g = t._grad
        if g is None:
            continue
        if set_to_none:
            t._grad = None
        else:
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            g.zero_()


