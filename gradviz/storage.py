"""Tensor.storage() and Tensor.untyped_storage(): the one-dimensional memory under a tensor and its
views, as torch.storage's TypedStorage (elements of the tensor's dtype, with torch's deprecation
warning) and UntypedStorage (bytes) show it.

The memory is the NumPy (or CuPy) array of the tensor that owns it: a view's storage is its base's.
Reading and writing a storage reach that memory, so `x.storage()[0] = 5` changes `x`, as in torch."""
from __future__ import annotations

import numpy as np

from . import backend, dtypes
from ._warn import warn_once
from .autograd import views as _views

_REMOVAL = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
            "storage class. This should only matter to you if you are using storages directly.  To access "
            "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")


def _memory(tensor):
    """The flat array over the memory `tensor` lies in: its base's array, in the order it lies in memory."""
    view = tensor._view
    owner = tensor if view is None else view.base
    flat = owner._data.ravel(order="K")
    if not np.shares_memory(flat, owner._data) and owner._data.size > 1:
        # an array with gaps (a slice NumPy handed back as a result) has no flat memory of its own
        raise RuntimeError("storage(): this tensor's memory is not one block; call .contiguous() first")
    return flat


class _Storage:
    """The elements of `_flat` (a 1-D array sharing the tensor's memory), one per index."""

    def __init__(self, flat) -> None:
        self._flat = flat

    def size(self) -> int:
        return int(self._flat.size)

    def __len__(self) -> int:
        return self.size()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(self._flat[index])
        return backend.to_numpy(self._flat[index]).item()

    def __setitem__(self, index, value) -> None:
        self._flat[index] = value

    def __iter__(self):
        return iter(self[i] for i in range(self.size()))

    def tolist(self) -> list:
        return backend.to_numpy(self._flat).tolist()

    def nbytes(self) -> int:
        return int(self._flat.nbytes)

    def data_ptr(self) -> int:
        return _views._address(self._flat)

    @property
    def device(self):
        return backend.device_of(self._flat)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def _text(self, details: str) -> str:
        """torch's print: one element a line, then [<class>(<details>) of size n]."""
        name = f"{type(self).__module__}.{type(self).__qualname__}"
        return (" " + "\n ".join(str(self[i]) for i in range(self.size())) +
                f"\n[{name}({details}) of size {len(self)}]")


class UntypedStorage(_Storage):
    """The tensor's memory as bytes."""

    def __init__(self, flat) -> None:
        super().__init__(flat.view(np.uint8))

    def element_size(self) -> int:
        return 1

    def __repr__(self) -> str:
        return self._text(f"device={self.device}")

    __str__ = __repr__


class TypedStorage(_Storage):
    """The tensor's memory as elements of its dtype (torch warns once that the class is deprecated)."""

    @property
    def dtype(self):
        return dtypes.from_numpy_dtype(self._flat.dtype)

    def element_size(self) -> int:
        return int(self._flat.itemsize)

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return super().__getitem__(index)

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._flat)

    def __repr__(self) -> str:
        warn_once(_REMOVAL)
        return self._text(f"dtype={self.dtype}, device={self.device}")

    __str__ = __repr__


def typed_storage(tensor) -> TypedStorage:
    warn_once(_REMOVAL)
    return TypedStorage(_memory(tensor))


def untyped_storage(tensor) -> UntypedStorage:
    return UntypedStorage(_memory(tensor))

