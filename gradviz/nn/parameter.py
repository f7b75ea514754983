"""torch.nn.parameter: Parameter, the tensor a Module registers as its learnable state; Buffer, a\ntensor marked to be registered as a buffer; the uninitialized forms a lazy module holds."""
from __future__ import annotations

from ..tensor import Tensor
from .. import creation


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter (requires_grad=True by default)."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        data = data if data is not None else creation.tensor([])
        if not isinstance(data, Tensor):   # torch detaches what is not a plain tensor
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
        if requires_grad and not (data.is_floating_point() or data.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
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


class _BufferMeta(type):
    """isinstance(t, Buffer) is True for any tensor Buffer(...) made: Buffer returns the tensor itself,
    marked, not an instance of a subclass (torch's _BufferMeta)."""

    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor that a Module registers as a buffer when assigned as its attribute (`self.mask =
    nn.Buffer(t)`): state, but not a parameter; `persistent=False` keeps it out of state_dict()."""

    __slots__ = ()

    def __new__(cls, data=None, *, persistent: bool = True):
        if data is None:
            data = creation.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


# -- uninitialized parameters and buffers: what a lazy module holds before its first call ----------
# torch lets only these through its __torch_function__; every other public Tensor method raises
_ALLOWED = {"size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char", "short", "int",
            "long", "cuda", "cpu", "to", "get_device", "requires_grad_", "materialize", "share_memory_", "type"}
# the Python operators torch names by the method they call
_OPERATORS = {"__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub",
              "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div",
              "__rtruediv__": "div", "__itruediv__": "div_", "__matmul__": "matmul", "__rmatmul__": "matmul",
              "__neg__": "neg", "__pow__": "pow", "__rpow__": "pow", "__getitem__": "__getitem__",
              "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge"}


def _uninitialized_use(what: str):
    def refuse(self, *args, **kwargs):
        raise ValueError(f"Attempted to use an uninitialized parameter in {what}. This error happens when you are "
                         "using a `LazyModule` or explicitly manipulating "
                         f"`torch.nn.parameter.{type(self).__name__}` objects. When using LazyModules Call `forward` "
                         "with a dummy batch to initialize the parameters before calling torch functions")
    return refuse


class UninitializedTensorMixin:
    """A tensor with no shape yet: it prints as <UninitializedParameter>, refuses to be computed
    with (torch's ValueError), and becomes an ordinary tensor, the same object, when a lazy module
    materializes it with the shape its first input implies."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if UninitializedTensorMixin in cls.__bases__:
            for name, attr in vars(Tensor).items():
                if name in _OPERATORS:
                    setattr(cls, name, _uninitialized_use(f"<method '{_OPERATORS[name]}' of 'torch._C.TensorBase' "
                                                          "objects>"))
                elif callable(attr) and not name.startswith("_") and name not in _ALLOWED:
                    setattr(cls, name, _uninitialized_use(f"<method '{name}' of 'torch._C.TensorBase' objects>"))
            cls.__len__ = _uninitialized_use(f"<function Tensor.__len__ at {hex(id(Tensor.__len__))}>")

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Become a tensor of `shape` (uninitialized values, as torch.empty), keeping this object."""
        data = creation.empty(*tuple(shape), dtype=dtype or self.dtype, device=device or self.device)
        self._data = data._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, creation.empty(0, dtype=dtype, device=device), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = Tensor._make(creation.empty(0, dtype=dtype, device=device)._data)
        t.__class__ = cls
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def is_lazy(param) -> bool:
    return isinstance(param, UninitializedTensorMixin)
