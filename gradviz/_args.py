"""torch's argument parser's words for an argument of the wrong type (python_arg_parser.cpp)."""
from __future__ import annotations

import numbers
import re

import numpy as np


def is_tensor(value) -> bool:
    """A gradviz Tensor or a subclass of it (Parameter), told without importing gradviz.tensor."""
    return any(c.__name__ == "Tensor" and c.__module__ == "gradviz" for c in type(value).__mro__)


# gradviz's classes that stand for torch's C++ ones, under the names torch's messages give those
_TORCH_NAMES = {("gradviz.random", "Generator"): "torch._C.Generator", ("gradviz.dtypes", "dtype"): "torch.dtype"}


def type_name(value) -> str:
    """A value's type as torch's messages name it (CPython's tp_name): list, Tensor, numpy.ndarray."""
    cls = type(value)
    if (cls.__module__, cls.__qualname__) in _TORCH_NAMES:
        return _TORCH_NAMES[cls.__module__, cls.__qualname__]
    heap = cls.__flags__ & (1 << 9)   # Py_TPFLAGS_HEAPTYPE: a class written in Python
    return cls.__name__ if heap or cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def int_sizes(fn: str, arg: str, sizes: tuple, keyword: bool = False, position: int = 1) -> tuple:
    """sizes (given as f(2, 3), f((2, 3)) or arg=(2, 3)) as ints; torch's TypeError for one that is
    not an int (a float, None; a bool only first), worded as its parser words each form (position:
    the argument's, where sizes are not the first)."""
    packed = keyword or len(sizes) == 1 and isinstance(sizes[0], (tuple, list))
    items = tuple(sizes[0]) if packed else sizes
    if all(type(s) is int for s in items):   # the commonest call: nothing to check or convert
        return items
    for i, s in enumerate(items):
        if type(s) is not int and (isinstance(s, bool) and i == 0 or not hasattr(type(s), "__index__")):
            what = type_name(s)
            if i > 0:   # past the first size torch's parser unpacks the sequence item by item
                raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                                f"\"type must be tuple of ints,but got {what}\"")
            if keyword:
                raise TypeError(f"{fn}(): argument '{arg}' must be tuple of ints, not {type_name(sizes[0])}")
            if packed:
                raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be tuple of ints, but found "
                                f"element of type {what} at pos 0")
            if len(items) > 1:   # torch then reads the first size as the whole argument
                raise TypeError(f"{fn}() takes 1 positional argument but {len(items)} were given")
            raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be tuple of ints, not {what}")
    return tuple(int(s) for s in items)


def typename(obj) -> str:
    """torch.typename: 'torch.FloatTensor' for a tensor, a function's or class's own qualified name,
    else its class's ('int', 'numpy.ndarray')."""
    if is_tensor(obj):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def argument_error(fn: str, param: str, position: int, expected: str, got: str) -> TypeError:
    """torch's parser's TypeError for an argument of the wrong type ("mm(): argument 'mat2'
    (position 2) must be Tensor, not list"), its parts kept in .argument: the Tensor method
    counts positions after self (see method_error)."""
    error = TypeError(f"{fn}(): argument '{param}' (position {position}) must be {expected}, not {got}")
    error.argument = (fn, param, position, expected, got)
    return error


def method_error(error: TypeError, name: str) -> TypeError:
    """The error a Tensor method `name` raises for one its function raised: an argument's position
    one less (self is not counted), the overloads listed without input and out=; any other error as it is."""
    combination = getattr(error, "combination", None)
    if combination is not None and combination[0] == name:
        fn, args, kwargs, signatures = combination
        return invalid_arguments(fn, args[1:], kwargs, tuple(_METHOD_FORM.sub("", s) for s in signatures))
    argument = getattr(error, "argument", None)
    if argument is None or argument[0] != name:
        return error
    fn, param, position, expected, got = argument
    return argument_error(fn, param, position - 1, expected, got)


def with_method_errors(call, name: str):
    """call(self, *args, **kwargs) as the Tensor method `name`, its TypeErrors worded as the method's
    (method_error)."""
    def method(self, *args, **kwargs):
        try:
            return call(self, *args, **kwargs)
        except TypeError as error:
            shifted = method_error(error, name)
            if shifted is error:
                raise
            raise shifted from None
    method.__name__ = method.__qualname__ = name
    method.__doc__ = call.__doc__
    return method


# what a function's overload has that the Tensor method's lacks: the input first, out= last
_METHOD_FORM = re.compile(r"^Tensor input(, )?|(, \*)?, (Tensor|tuple of Tensors) out = None$|"
                          r"(?<=invalid types: \()Tensor, ", re.M)


_PARAMETER = re.compile(r"(\w+)(?: = [^,]*)?(?:, |$)")   # a parameter's name in an overload


def check_flags(fn: str, input, signatures: tuple, **flags) -> None:
    """torch's TypeError when a bool flag (stable=, unbiased=) gets anything but a bool: its parser
    takes no 1, 'yes' or tensor for a bool, where Python would read their truth. flags: name ->
    the value given (None: left out); signatures: the function's overloads as torch lists them."""
    if all(value is None or type(value) is bool for value in flags.values()):
        return
    given = {name: value for name, value in flags.items() if value is not None}
    # torch's parser notes the keyword under the overload that takes exactly the keywords given
    noted = tuple(s + f"\n      didn't match because some of the keywords were incorrect: {', '.join(given)}"
                  if set(_PARAMETER.findall(_METHOD_FORM.sub("", s))) == set(given) else s for s in signatures)
    error = invalid_arguments(fn, (input,), given, noted)
    error.combination = (fn, (input,), given, noted)
    raise error


def is_number(value) -> bool:
    """What a Number parameter takes: a Python or NumPy scalar, or a 0-d tensor."""
    if type(value) in (int, float) or isinstance(value, (numbers.Number, np.bool_)):
        return True
    return is_tensor(value) and value.ndim == 0


def check_int_range(value) -> None:
    """torch's OverflowError for a Python int that no Scalar holds (beyond int64's negatives and uint64)."""
    if type(value) is int and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert" if value > 0 else "can't convert negative int to unsigned")


def check_number(fn: str, name: str, value, position: int | None = None) -> None:
    """torch's TypeError when a Number parameter (of a function with one signature) gets something else."""
    if not is_number(value):
        where = f" (position {position})" if position is not None else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be Number, not {type_name(value)}")
    check_int_range(value)


def invalid_arguments(fn: str, args: tuple, kwargs: dict, signatures: tuple) -> TypeError:
    """torch's TypeError when no signature of a function with several takes the arguments given."""
    got = [type_name(a) for a in args] + [f"{k}={type_name(v)}" for k, v in sorted(kwargs.items())]
    listed = ", ".join(got) + (", " if kwargs and not args else "")
    lines = (f" * ({head}){newline}{note}" for head, newline, note in (s.partition("\n") for s in signatures))
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({listed}), but expected one of:\n"
                     + "\n".join(lines))


def check_tensor(fn: str, name: str, value, position: int) -> None:
    """torch's TypeError when a Tensor parameter gets something else (a list, an array, None)."""
    if not is_tensor(value):
        raise argument_error(fn, name, position, "Tensor", type_name(value))


def check_operands(fn: str, input, other, other_name: str = "other", numbers: bool = True) -> None:
    """torch's TypeError for a binary function's operands: input a Tensor (its parser takes a number
    for one only for add, sub, mul, div), other a Tensor, or a number too where a second overload takes
    a Number (numbers=True: eq, fmod, clamp_max), worded as torch words a function of one overload or
    of two."""
    if not numbers:
        check_tensor(fn, "input", input, 1)
        check_tensor(fn, other_name, other, 2)
    elif not is_tensor(input) or not (is_tensor(other) or is_number(other)):
        raise invalid_arguments(fn, (input, other), {}, tuple(f"Tensor input, {kind} {other_name}, *, Tensor out = None"
                                                              for kind in ("Tensor", "Number")))


def check_bool(fn: str, name: str, value) -> None:
    """torch's TypeError when a bool parameter gets anything but a bool (1, None, numpy.bool, a tensor)."""
    if type(value) is not bool:
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type_name(value)}")


def gradients(grads, n: int) -> tuple:
    """backward's and grad's gradients as torch reads them (_tensor_or_tensors_to_tuple, then
    _make_grads): None, one Tensor, or an iterable of Tensors and Nones; a number or an array is
    not taken as a gradient ("'float' object is not iterable", "gradients can be either Tensors
    or None, but got float")."""
    if grads is None:
        return (None,) * n
    if is_tensor(grads):
        return (grads,)
    grads = tuple(grads)
    for g in grads[:n]:
        if g is not None and not is_tensor(g):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return grads
