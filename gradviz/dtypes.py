"""dtypes, torch.Size and the default dtype, with PyTorch's names and promotion rules."""
from __future__ import annotations

import numbers

import numpy as np

from ._args import check_int_range

# the scalars torch's argument parser takes as a Number: Python's and NumPy's
NUMBERS = (numbers.Number, np.number, np.bool_)


class dtype:
    """A tensor element type; prints as PyTorch does (torch.float32)."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_category")

    def __init__(self, name: str, np_dtype, category: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = category == 2
        self.is_signed = self.np.kind in "if"
        self.itemsize = self.np.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating point

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))   # pickled by name, so a loaded dtype is the same object


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)



class _Unbacked(dtype):
    """A dtype PyTorch has and NumPy lacks (bfloat16): it can be named, compared, printed and kept in a
    dict (train scripts build {'float32': torch.float32, 'bfloat16': torch.bfloat16, ...}), but no
    tensor of it can be made: asking for its NumPy dtype says so."""

    __slots__ = ()

    def __init__(self, name: str, itemsize: int):
        self.name = name
        self.is_floating_point = True
        self.is_signed = True
        self.itemsize = itemsize
        self._category = 2

    @property
    def np(self):
        raise TypeError(f"gradviz has no {self.name} tensors (NumPy has no {self.name} type): use torch.float32 "
                        "or torch.float16")


bfloat16 = _Unbacked("bfloat16", 2)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
_by_name = {d.name: d for d in ALL + (bfloat16,)}


def from_name(name: str) -> dtype:
    """The dtype named `name` (torch.float32's name is float32)."""
    return _by_name[name]

_by_np = {d.np: d for d in ALL}
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32, "long": int64}

_default = [float32]


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _by_np[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The only "
                        "supported types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool.") from None


def get_default_dtype() -> dtype:
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def as_np(d) -> np.dtype:
    """numpy dtype for a gradviz dtype, a numpy dtype or a Python type."""
    if isinstance(d, dtype):
        return d.np
    if d is float:
        return np.dtype(np.float64)   # as torch: dtype=float is torch.float64
    if d is int:
        return np.dtype(np.int64)
    if d is bool:
        return np.dtype(np.bool_)
    return np.dtype(d)


def wrapped_int(value: int, np_dtype: np.dtype) -> int:
    """A Python int as an integer tensor's dtype holds it: torch converts out-of-range values as C
    does, wrapping them around (uint8 + 300 adds 44); beyond 64 bits it refuses."""
    if not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")
    bits = np_dtype.itemsize * 8
    value %= 2 ** bits
    return value - 2 ** bits if np_dtype.kind == "i" and value >= 2 ** (bits - 1) else value


def category_of_scalar(value) -> int:
    if isinstance(value, (bool, np.bool_)):
        return 0
    if isinstance(value, (int, np.integer)):
        check_int_range(value)
        return 1
    return 2


def default_for_category(category: int) -> np.dtype:
    return (np.dtype(np.bool_), np.dtype(np.int64), get_default_dtype().np)[category]


# PyTorch's ScalarType names, as its error messages print them (torch.FloatTensor, "result type Float")
SCALAR_TYPE = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
# and its C++ type names, as other messages print them
C_TYPE = {"float16": "c10::Half", "float32": "float", "float64": "double", "int64": "long int", "int32": "int",
          "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


# the names c10::checked_convert gives the integer types in its overflow error
_CONVERTED = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}


def overflows(values, np_dtype: np.dtype) -> bool:
    """Whether Python numbers leave an integer dtype's range, as torch checks each one written into it
    (c10::overflows): a float beyond it, NaN or inf; an int beyond it, where an unsigned type lets a
    negative int down to -max wrap round (uint8 takes -1 as 255)."""
    if np_dtype.kind not in "iu":   # float and bool tensors take any number (first: zeros() and ones() pass here)
        return False
    a = np.asarray(values)
    if a.dtype.kind not in "iuf" or not a.size:
        return False
    info = np.iinfo(np_dtype)
    if a.dtype.kind == "f":
        return not (np.isfinite(a).all() and info.min <= a.min() and a.max() <= info.max)
    low = -int(info.max) if np_dtype.kind == "u" else info.min
    return bool(a.min() < low or a.max() > info.max)


def fitted(value, np_dtype: np.dtype):
    """A Python number as written into a tensor of np_dtype (full, fill_, masked_fill, clamp's bounds):
    torch's error where it `overflows`, a negative int wrapped round into an unsigned type."""
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real) and np_dtype.kind in "iuf":
        raise RuntimeError(f"value cannot be converted to type {_CONVERTED.get(np_dtype.name, C_TYPE[np_dtype.name])} "
                           "without overflow")   # a complex number into a real dtype (bool takes its truth)
    if np_dtype.kind not in "iu" or isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return value
    if overflows(value, np_dtype):
        raise RuntimeError(f"value cannot be converted to type {_CONVERTED[np_dtype.name]} without overflow")
    return int(value) % (int(np.iinfo(np_dtype).max) + 1) if np_dtype.kind == "u" and value < 0 else value


def kernel_missing(kernel: str, np_dtype) -> NotImplementedError:
    """PyTorch's error when its kernel has no version for a dtype ("abs_cpu" not implemented for 'Bool')."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_TYPE[np.dtype(np_dtype).name]}\'')


def floating_kernel(kernel: str, np_dtype: np.dtype) -> None:
    """PyTorch's error when a kernel that has only floating-point versions meets a bool or integer dtype."""
    if np_dtype.kind in "biu":
        raise kernel_missing(kernel, np_dtype)


def _category(np_dtype: np.dtype) -> int:
    return 0 if np_dtype.kind == "b" else (2 if np_dtype.kind in "fc" else 1)


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types: within a category as NumPy (uint8 + int8 -> int16), across
    categories the higher one's dtype as it is (int64 + float32 -> float32, not float64)."""
    ca, cb = _category(a), _category(b)
    if ca == cb:
        return np.promote_types(a, b)
    return a if ca > cb else b


def promote_types_all(dts) -> np.dtype:
    """torch.promote_types over several dtypes."""
    return _promote_all(dts)


def _promote_all(dts) -> np.dtype:
    result = dts[0]
    for d in dts[1:]:
        result = promote_types(result, d)
    return np.dtype(result)


def result_type(arrays, scalars=()) -> np.dtype:
    """PyTorch's type promotion: tensors with dimensions decide, zero-dim tensors and
    Python scalars only raise the category (bool < integer < floating point)."""
    dimmed = [a.dtype for a in arrays if a.ndim]
    zero_dim = [a.dtype for a in arrays if not a.ndim]
    result = _promote_all(dimmed) if dimmed else (_promote_all(zero_dim) if zero_dim else None)
    if dimmed and zero_dim:
        higher = [d for d in zero_dim if _category(d) > _category(result)]
        if higher:
            top = max(_category(d) for d in higher)
            result = _promote_all([d for d in higher if _category(d) == top])
    for s in scalars:
        cat = category_of_scalar(s)
        if result is None or cat > _category(result):
            result = default_for_category(cat)
    return result


class memory_format:  # noqa: N801  (torch.memory_format)
    """How a tensor's elements are laid out in memory. gradviz keeps every result row-major, so a
    layout changes no value: the formats are accepted (and checked) where PyTorch takes them."""

    __slots__ = ("name", "rank")

    def __init__(self, name: str, rank: int | None = None):
        self.name, self.rank = name, rank

    def __repr__(self) -> str:
        return f"torch.{self.name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)


def check_memory_format(fmt, ndim: int) -> None:
    """PyTorch's errors for a memory_format= argument; every format leaves the values as they are."""
    if fmt is None:
        return
    if not isinstance(fmt, memory_format):
        raise TypeError(f"memory_format must be torch.memory_format, not {type(fmt).__name__}")
    if fmt.rank is not None and ndim != fmt.rank:
        raise RuntimeError(f"required rank {fmt.rank} tensor to use {fmt.name} format")


class layout:  # noqa: N801  (torch.layout)
    """How a tensor's elements are stored. gradviz's tensors are all dense (torch.strided), so that is
    its one layout, accepted where PyTorch takes layout=."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


strided = layout("strided")


def check_layout(fn: str, value) -> None:
    """PyTorch's error for a layout= argument that is not a layout (None means strided)."""
    if value is not None and not isinstance(value, layout):
        raise TypeError(f"{fn}(): argument 'layout' must be torch.layout, not {type(value).__name__}")


class Size(tuple):
    """A tensor's shape; a tuple that prints as torch.Size([3, 4])."""

    def __repr__(self):
        return f"torch.Size([{', '.join(map(str, self))}])"

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


def _g(value: float) -> str:
    """A number as torch's finfo and iinfo print it (C's %g)."""
    return f"{value:g}"


class finfo:
    """torch.finfo: the limits of a floating dtype (the default dtype when none is given)."""

    def __init__(self, type=None) -> None:
        dt = get_default_dtype() if type is None else type
        np_dtype = as_np(dt)
        if np_dtype.kind != "f":
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = np.finfo(np_dtype)
        self.bits, self.dtype = info.bits, np_dtype.name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)   # in doubles, as torch (NumPy's float16 one is rounded)

    def __repr__(self) -> str:
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: the limits of an integer dtype."""

    def __init__(self, type) -> None:
        np_dtype = as_np(type)
        if np_dtype.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if np_dtype.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(np_dtype)
        self.bits, self.dtype, self.max, self.min = info.bits, np_dtype.name, int(info.max), int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"
