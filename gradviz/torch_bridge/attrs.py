"""A torch node's saved attributes as torch means them, under gradviz's names.

torch keeps a node's arguments in `_saved_*` fields, in its C++ types: a dim is an int64 read
back as an unsigned 64-bit number (dim=-1 arrives as 2**64 - 1), and a view saves the size it
came from, not the size it made. This module reads them back as the call meant them: a
negative dim wrapped with the ndim of the tensor it counts in (as gradviz records its own, so
softmax(x, -1) on a 3-D x reads `dim 2` on both), the size a view or expand produced, and the
tensors a node saved, in argument order.
"""
from __future__ import annotations

from functools import lru_cache

from ..autograd.function import arg_names, op_for_function
from ..formatting import shape as shape_text
from ..ops import conv, pointwise
from ..ops.shape import split_op, unbind_op
from . import numbers
from .graph import n_outputs, output_shape
from .support import torch_module

_UNSIGNED = 2 ** 64
_DIM_NAMES = ("dim", "dim0", "dim1", "dim2", "dims", "source", "destination", "dimension")
# nodes whose dim counts in their output, which has one dim more than the input
_DIM_OF_OUTPUT = {"UnsqueezeBackward0", "StackBackward0", "DiagEmbedBackward0"}
# nodes that do not save the shape they produce: their `size` is their output's shape
_SIZE_IS_OUTPUT = {"ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0", "ExpandBackward0"}
# enums torch saves as their C++ ordinal, by attribute name
_ENUMS = {"reduction": ("none", "mean", "sum"), "interpolation_mode": ("bilinear", "nearest", "bicubic"),
          "padding_mode": ("zeros", "border", "reflection")}
_BAG_MODES = ("sum", "mean", "max")


def signed(value):
    """An int64 torch read back as unsigned, as the signed number it was (2**64 - 1 -> -1)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 2 ** 63:
        return value - _UNSIGNED
    return value


def _wrap(value, ndim: int | None):
    """A dim as a non-negative number: torch wraps -1 of a 0-d tensor to 0, as of a 1-d one."""
    value = signed(value)
    if isinstance(value, int) and not isinstance(value, bool) and value < 0 and ndim is not None:
        return value + max(ndim, 1)
    return value


def _derived(fn, name: str):
    """An attribute torch does not save under the name gradviz's record uses, from what it does
    save: a view's or a squeeze's size (its output's shape), an adaptive pool's
    output_size (its output's last dims). AttributeError where there is none."""
    kind = type(fn).__name__
    if name == "size" and (kind in _SIZE_IS_OUTPUT or kind.startswith("SqueezeBackward")):
        out = _out_shape(fn)
        if out is not None:
            return out
    if name == "output_size" and kind.startswith("Adaptive"):
        out = _out_shape(fn)
        if out is not None:
            return out[-(3 if "3D" in kind else 2 if "2D" in kind else 1):]
    raise AttributeError(name)


def _position(fn, value, name: str = "start"):
    """An index along a dim (select's index, slice's start and end) as Python's slicing means it:
    a negative one counted from the end, an end past the size (x[1:] saves 2**63 - 1) the size."""
    value = signed(value)
    try:
        size = fn._saved_self_sym_sizes[_wrap(fn._saved_dim, len(fn._saved_self_sym_sizes))]
    except (AttributeError, IndexError, TypeError, RuntimeError):
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    value = min(max(value + size, 0) if value < 0 else value, size)
    if name == "end":   # an end before the start is an empty slice that ends where it starts
        value = max(value, _position(fn, getattr(fn, "_saved_start", 0)))
    return value


def counted_ndim(fn) -> int | None:
    """The ndim of the tensor a node's dims count in: its input's (from the sizes it saved, the
    input it saved, or the input's edge), its output's for unsqueeze and stack."""
    name = type(fn).__name__
    out = _out_shape(fn)
    if name in _DIM_OF_OUTPUT and out is not None:
        return len(out)
    for attr in ("_saved_self_sym_sizes", "_saved_self"):
        try:
            value = getattr(fn, attr)
        except (AttributeError, RuntimeError):
            continue
        if isinstance(value, (tuple, list)):
            return len(value)
        if hasattr(value, "ndim"):
            return value.ndim
    for nxt, nr in fn.next_functions:
        if nxt is not None:
            shape = output_shape(nxt, nr)
            if shape is not None:
                return len(shape)
        break
    return None if out is None else len(out)


def _out_shape(fn) -> tuple | None:
    try:
        meta = fn._input_metadata
    except (AttributeError, RuntimeError):
        return None
    return tuple(meta[0].shape) if len(meta) == 1 else None


def saved_value(fn, name: str, ndim=None):
    """fn._saved_<name> as torch means it: signed, a dim wrapped with `ndim` (counted_ndim when
    not given), a view's `size` its output shape. AttributeError when the node has no such field;
    RuntimeError when a backward freed it."""
    reader = _readers(type(fn)).get(name)
    if reader is None:
        return _derived(fn, name)
    attr, meaning = reader
    return meaning(fn, getattr(fn, attr), ndim)


@lru_cache(maxsize=None)
def _readers(kind: type) -> dict:
    """name -> (the attribute, how its value reads) of every field a node type saves, made once per type."""
    return {name: (f"_saved_{name}", _meaning(kind, name)) for name in saved_names(kind)}


def _meaning(kind: type, name: str):
    """How a value a node type saves under `name` reads as torch means it, a function of (node, the
    value, ndim), chosen once per node type and name."""
    node = kind.__name__
    enum = _ENUMS.get(name) or (_BAG_MODES if name == "mode" and node.startswith("EmbeddingBag") else ())
    if enum:
        return lambda fn, value, ndim: (enum[value] if isinstance(value, int) and 0 <= value < len(enum)
                                        else _signed_all(value))
    if name == "padding_idx":   # embedding's "no padding index" is -1
        return lambda fn, value, ndim: None if signed(value) == -1 else _signed_all(value)
    if name in ("index", "start", "end") and node in ("SelectBackward0", "SliceBackward0"):
        return lambda fn, value, ndim: _position(fn, value, name)
    if name in _DIM_NAMES:
        return _dims
    return lambda fn, value, ndim: _signed_all(value)


def _dims(fn, value, ndim):
    ndim = counted_ndim(fn) if ndim is None else ndim
    if isinstance(value, (tuple, list)):
        return tuple(_wrap(v, ndim) for v in value)
    return _wrap(value, ndim)


def _signed_all(value):
    if isinstance(value, (tuple, list)):
        try:
            if max(value, default=0) < 2 ** 63:   # most sizes and strides: nothing to sign
                return type(value)(value)
        except TypeError:   # not all numbers
            pass
        return type(value)(signed(v) for v in value)
    return signed(value)


class SavedValues:
    """A node's saved attributes as torch means them (`saved_value`), each read at most once: one
    record reads the same dims and sizes for its attrs, its constants and its constant inputs."""
    __slots__ = ("fn", "_read", "_ndim", "_given")

    def __init__(self, fn):
        self.fn, self._read, self._ndim, self._given = fn, {}, None, None

    def get(self, name: str):
        """saved_value(fn, name), or the exception it raised (AttributeError: the node has no such field)."""
        try:
            return self._read[name]
        except KeyError:
            pass
        try:
            if name in _DIM_NAMES and self._ndim is None:
                self._ndim = (counted_ndim(self.fn),)
            value = saved_value(self.fn, name, self._ndim[0] if name in _DIM_NAMES else None)
        except Exception as exc:   # absent, or freed after backward
            value = exc
        self._read[name] = value
        return value

    def given(self, op) -> dict:
        """The numbers the learner's call gave the node where it saved none (numbers.given), found once."""
        if self._given is None:
            self._given = numbers.given(self.fn, op, lambda name: saved_plain(self.fn, name, self))
        return self._given

    def keep(self, names) -> None:
        """Read `names` (the fields an in-place write can change: the tensors a node saved) now, as
        they are now (a 0-d tensor's value copied, a view reads it), and the ndim dims count in, so
        the node's other fields, which no write changes, can be read later to the same effect."""
        for name in names:
            value = self.get(name)
            if type(value).__name__ == "Tensor" and value.ndim == 0:
                copied = value.detach().clone()
                self._read[name] = copied.requires_grad_() if value.requires_grad else copied
        if self._ndim is None and any(name in _DIM_NAMES for name in _readers(type(self.fn))):
            self._ndim = (counted_ndim(self.fn),)


def saved_plain(fn, name: str, values: SavedValues | None = None):
    """A saved attribute as a plain number, bool or list of numbers; None when it is not one.
    values: the node's SavedValues, where the caller reads several."""
    value = (values or SavedValues(fn)).get(name)
    if isinstance(value, Exception):   # absent, or freed after backward
        return None
    if type(value).__name__ == "Tensor":
        return value.item() if value.dim() == 0 and not value.requires_grad else None
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float)) for v in value):
        return list(value)
    return None


@lru_cache(maxsize=None)
def saved_names(kind: type) -> tuple:
    """The names of a node type's `_saved_*` fields (torch defines them on the class), without the prefix."""
    return tuple(a[len("_saved_"):] for a in dir(kind) if a.startswith("_saved_"))


@lru_cache(maxsize=None)
def _attr_plan(kind: type) -> tuple:
    """(the names a node of this type may show, sorted; the one a node may derive rather than
    save, or None), worked out once per node type."""
    names = saved_names(kind)
    name = kind.__name__
    extra = "size" if name in _SIZE_IS_OUTPUT or name.startswith("SqueezeBackward") else \
        "output_size" if name.startswith("Adaptive") else None
    if extra in names:
        extra = None
    return tuple(sorted(names + ((extra,) if extra else ()))), extra


def attr_names(fn) -> list:
    """Every attribute a node shows: its `_saved_*` fields, and the size a view produced."""
    names, extra = _attr_plan(type(fn))
    if extra is not None:
        try:
            _derived(fn, extra)
        except AttributeError:
            names = [n for n in names if n != extra]
    return list(names)


def attrs(fn, values: SavedValues | None = None) -> tuple:
    """(name, text) of every attribute of a node, as torchviz's show_attrs lists them, as torch means them.
    values: the node's SavedValues, where the caller reads them for more than this."""
    values = values or SavedValues(fn)
    out = []
    for name in _attr_plan(type(fn))[0]:
        value = values.get(name)
        if isinstance(value, AttributeError):   # a size this node cannot derive (attr_names leaves it out)
            continue
        if isinstance(value, Exception):   # freed after backward: the name is still worth showing
            value = "[freed]"
        out.append((name, attr_text(value)))
    return tuple(out)


_PLAIN = (int, float, bool, str, type(None))


def attr_text(value) -> str:
    if type(value) in _PLAIN or type(value) is list:   # most attributes: a dim, a flag, a scale, sizes
        return str(value)
    if type(value).__name__ == "Tensor" and value.ndim == 0:   # a saved number: its value (a tensor's repr is slow)
        return str(value.item())
    if hasattr(value, "shape") and hasattr(value, "dtype") and getattr(value, "ndim", 0) > 0:
        kind = "saved tensor" if type(value).__name__ == "Tensor" else "array"
        return f"[{kind} {shape_text(value.shape)}]"
    if isinstance(value, tuple) and any(type(v).__name__ == "Tensor" for v in value):
        return "[saved tensors]"
    return str(value)


_SPLITS = ("SplitBackward0", "UnsafeSplitBackward0", "SplitWithSizesBackward0", "UnsafeSplitWithSizesBackward0")


def variant(fn, op):
    """The record of the form torch ran where one node name has two: add/sub with an alpha other
    than 1, gelu with the tanh approximation, a transposed convolution (read from the node's
    _saved_* fields); a split or unbind, whose record depends on how many outputs the node has."""
    if op is None:
        name = type(fn).__name__
        if name == "UnbindBackward0":
            return unbind_op(n_outputs(fn))
        if name in _SPLITS:
            return split_op(n_outputs(fn), name)
        return _user_function(fn)
    if op is pointwise.ADD or op is pointwise.SUB:
        if saved_plain(fn, "alpha") not in (None, 1):
            return pointwise.ADD_ALPHA if op is pointwise.ADD else pointwise.SUB_ALPHA
    if op is pointwise.GELU and getattr(fn, "_saved_approximate", "none") == "tanh":
        return pointwise.GELU_TANH
    if op is conv.CONVOLUTION and saved_plain(fn, "transposed"):   # conv_transpose{1,2,3}d's node
        return conv.CONV_TRANSPOSE
    if op is conv.CONV_INPUT_GRAD and len(fn.next_functions) == 3:
        return None   # torch's one node for x̄, W̄ and b̄ of (g, x, W), where gradviz records two: read as numbered
    return op


def _user_function(fn):
    """The record of a custom torch.autograd.Function's node (its formulas say it runs user code), or None.

    torch's node has an input slot per tensor argument of forward, and needs_input_grad a flag per
    argument: the slots that carry a gradient are the arguments flagged, in order; backward returns
    a gradient for every argument, so its index is the argument's position."""
    cls = getattr(fn, "_forward_cls", None)
    needs = getattr(fn, "needs_input_grad", None)
    if cls is None or needs is None:
        return None
    flagged = [i for i, need in enumerate(needs) if need]
    others = [i for i, need in enumerate(needs) if not need]
    positions = tuple(flagged.pop(0) if nxt is not None and flagged else others.pop(0) if others else slot
                      for slot, (nxt, _) in enumerate(fn.next_functions))
    names = arg_names(cls.forward, True, len(needs))
    return op_for_function(cls, tuple(names[p] if p < len(names) else f"input{p}" for p in positions),
                           n_outputs(fn), positions)


def _piece_sizes(fn, values: SavedValues) -> list | None:
    """The sizes of a split's pieces, as gradviz records them ([3, 1]), where torch saved the one
    size of chunk and split(int) (3) beside the split tensor's sizes."""
    size, dim, sizes = (saved_plain(fn, k, values) for k in ("split_size", "dim", "self_sym_sizes"))
    if size is None or dim is None or sizes is None:
        return None
    whole = sizes[dim]
    return [min(size, whole - start) for start in range(0, whole, size)] if size > 0 else None


def constants(fn, op, inputs, values: SavedValues | None = None) -> tuple:
    """(key, value) of the numbers a torch node used, read from its saved attributes under the
    record's names: params by name (stride, dim, exponent, alpha) and, by input slot, a wrapped
    number (the 2 of x * 2); the keys are the markers of the record's LaTeX. values: the node's
    SavedValues, where the caller reads them for more than this."""
    if op is None:
        return ()
    values = values or SavedValues(fn)
    return param_constants(fn, op, values) + input_constants(fn, op, inputs, values)


def param_constants(fn, op, values: SavedValues) -> tuple:
    """The params of `constants`, by name."""
    found = []
    for name in op.param_names:
        value = saved_plain(fn, name, values)
        if value is None:
            value = values.given(op).get(name)
        if value is None and name in ("min", "max") and name in saved_names(type(fn)):
            value = float("-inf") if name == "min" else float("inf")   # clamp(min=0): no upper bound
        if name == "split_sizes" and value is None:
            value = _piece_sizes(fn, values)
        if name == "stride" and not value and dict(found).get("kernel_size") is not None:
            value = dict(found)["kernel_size"]   # a pool's stride=None is saved as []: the kernel size
        if value is not None:
            found.append((name, value))
    return tuple(found)


def input_constants(fn, op, inputs, values: SavedValues) -> tuple:
    """The inputs of `constants` given as numbers, by slot ("0", "1", ...)."""
    found = []
    for slot, (arg, info) in enumerate(zip(op.arg_names, inputs)):
        if info.producer is None:
            value = saved_plain(fn, arg, values)
            if value is None:
                value = values.given(op).get(arg)
            if value is not None:
                found.append((str(slot), value))
    if op in (conv.CONVOLUTION, conv.CONV_TRANSPOSE) and len(inputs) == 3 and inputs[2].producer is None \
            and saved_plain(fn, "bias_sym_sizes_opt", values) in (None, [0]):
        found.append(("2", None))   # called without a bias (torch saves its size as [0]): no bias term
    return tuple(found)


def saved_tensors(fn, op) -> list:
    """(name, tensor) for each tensor `fn` saved for its backward; [] once a backward freed them."""
    torch = torch_module()
    found = []
    try:
        for name in saved_names(type(fn)):
            value = getattr(fn, f"_saved_{name}")
            if isinstance(value, torch.Tensor):
                found.append((name, value))
            elif isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
                found.extend((f"{name}[{i}]", v) for i, v in enumerate(value))
        if not found and hasattr(fn, "saved_tensors") and hasattr(fn, "_raw_saved_tensors"):
            # a custom autograd.Function keeps ctx.save_for_backward(...) here
            found.extend((f"saved_tensors[{i}]", v) for i, v in enumerate(fn.saved_tensors) if v is not None)
    except RuntimeError:   # "Trying to backward through the graph a second time ..."
        return []
    # gradviz lists saved inputs in argument order, then the result; the rest alphabetically
    args = ("self",) + (op.arg_names if op is not None else ())
    rank = {name: i for i, name in reversed(list(enumerate(args)))}
    found.sort(key=lambda item: (item[0] == "result", rank.get(item[0], len(rank)), item[0]))
    return found
