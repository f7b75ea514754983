"""torch.utils.data._utils.collate: samples stacked into a batch (default_collate), or
converted one by one (default_convert)."""
from __future__ import annotations

import collections.abc
import re
from typing import Any

import numpy as np

from .... import creation, dtypes
from ....functions import stack
from ....tensor import Tensor


# -- collation ---------------------------------------------------------------------------------------
_NOT_COLLATABLE = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


_STRING_ARRAY = re.compile(r"[SaUO]")


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch, recursing into tuples, lists and dicts as torch does."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if type(elem).__module__ == "numpy" and type(elem).__name__ not in ("str_", "string_"):
        if type(elem).__name__ in ("ndarray", "memmap"):
            if _STRING_ARRAY.search(elem.dtype.str) is not None:
                raise TypeError(_NOT_COLLATABLE.format(elem.dtype))
            return default_collate([creation.as_tensor(b) for b in batch])
        if elem.shape == ():
            return creation.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return creation.tensor(batch)
    if isinstance(elem, float):
        return creation.tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated) if type(elem) is not dict else collated
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):   # a namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_NOT_COLLATABLE.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Without batching: NumPy arrays become tensors, containers are converted inside."""
    if isinstance(data, np.ndarray) and _STRING_ARRAY.search(data.dtype.str) is None:
        return creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(v) for key, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data
