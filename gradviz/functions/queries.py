"""torch's questions about tensors and dtypes, as functions (and Tensor methods where torch has
them): is_floating_point, is_complex, is_signed, is_nonzero, is_same_size, result_type,
promote_types, can_cast. No op runs: each answers from dtypes and shapes."""
from __future__ import annotations

from .. import dtypes
from .._args import check_tensor
from ..tensor import Tensor
from .public import public


@public
def is_floating_point(input) -> bool:
    check_tensor("is_floating_point", "input", input, 1)
    return input.is_floating_point()


@public(method=True)
def is_complex(input) -> bool:
    check_tensor("is_complex", "input", input, 1)
    return input._data.dtype.kind == "c"


@public(method=True)
def is_signed(input) -> bool:
    check_tensor("is_signed", "input", input, 1)
    return input._data.dtype.kind in "fic"


@public(method=True)
def is_nonzero(input) -> bool:
    """The one element's truth (torch's words when there are none or several)."""
    check_tensor("is_nonzero", "input", input, 1)
    return bool(input)


@public(method=True)
def is_same_size(input, other) -> bool:
    check_tensor("is_same_size", "other", other, 2)
    return tuple(input.shape) == tuple(other.shape)


@public
def result_type(tensor, other) -> dtypes.dtype:
    """The dtype an arithmetic op of the two (tensors or Python numbers) would give."""
    arrays = [t._data for t in (tensor, other) if isinstance(t, Tensor)]
    scalars = [s for s in (tensor, other) if not isinstance(s, Tensor)]
    if not arrays:   # two numbers: the dtype torch.tensor would give the higher one
        categories = [dtypes.category_of_scalar(s) for s in scalars]
        return dtypes.from_numpy_dtype(dtypes.default_for_category(max(categories)))
    return dtypes.from_numpy_dtype(dtypes.result_type(arrays, scalars))


@public
def promote_types(type1, type2) -> dtypes.dtype:
    return dtypes.from_numpy_dtype(dtypes.promote_types(dtypes.as_np(type1), dtypes.as_np(type2)))


@public
def can_cast(from_, to) -> bool:
    """Whether torch's in-place and out= ops allow writing from_ into to: never to a lower kind."""
    return dtypes._category(dtypes.as_np(from_)) <= dtypes._category(dtypes.as_np(to))
