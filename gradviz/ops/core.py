"""The array side of running an op: the array namespaces the rules are written against,
the array helpers VJP rules share, and PyTorch's words for shape errors.

Running an op on Tensors (grad mode, the Node, events) is autograd's: gradviz.autograd.apply.
"""
from __future__ import annotations


import functools

import numpy as np

from .. import backend
from . import special as _special
from .op import Op




# the integer as wide as each floating dtype, for selecting a float's bits
_SAME_WIDTH_INT = {2: np.int16, 4: np.int32, 8: np.int64}


class ArrayNamespace:
    """NumPy (or CuPy) plus the few helpers that VJP rules need beyond it."""

    arrays = True   # rules may branch on data here (the Tensor namespace has arrays = False)

    def __init__(self, xp):
        self.xp = xp
        # NumPy's names, bound once (a plain attribute read, not __getattr__), except those this class
        # defines itself (reshape, swapaxes, astype: np.astype would copy where the class's does not)
        self.__dict__.update({k: v for k, v in vars(xp).items() if not k.startswith("_") and k not in _METHODS})

    def __getattr__(self, name):   # a namespace that makes its names on first use
        return getattr(self.xp, name)

    # NumPy's reshape and swapaxes are Python functions around the array's own methods (a µs each;
    # the VJPs of views call them for every gradient that passes): a NumPy array calls its method
    def reshape(self, a, shape):
        return a.reshape(shape) if type(a) is np.ndarray else self.xp.reshape(a, shape)

    def swapaxes(self, a, axis1, axis2):
        return a.swapaxes(axis1, axis2) if type(a) is np.ndarray else self.xp.swapaxes(a, axis1, axis2)

    def index_scatter(self, g, shape, index, accumulate=True):
        """zeros(shape) with g added at `index` (the adjoint of indexing)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        if not accumulate:
            out[index] = g
        elif (flat := _flat_rows(g, shape, index)) is not None:
            np.add.at(out.reshape(-1), flat, g.reshape(-1))
        else:
            self.xp.add.at(out, index, g)
        return out

    def scatter_add_zeros(self, shape, dim, index, g):
        """zeros(shape).scatter_add_(dim, index, g) (the adjoint of gather)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        self.xp.add.at(out, scatter_key(self.xp, index, dim), g)
        return out

    def gather_along(self, a, index, dim):
        """a.gather(dim, index): unlike take_along_axis, index may be smaller than a in every dim."""
        return a[scatter_key(self.xp, index, dim)]

    def diagonal_scatter(self, g, shape, offset, dim1, dim2):
        """zeros(shape) with g written on the diagonal (the adjoint of diagonal)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        view = self.xp.diagonal(out, offset, dim1, dim2)
        view.setflags(write=True) if self.xp is np else None
        view[...] = g
        return out

    def keep(self, g, mask):
        """g where mask holds, +0 elsewhere (inf and NaN too), as torch's `mask ? g : 0`: g's bits
        and-ed with all ones or none, in integer passes. where() is ~8x slower on unpredictable
        masks, and multiplying by the mask casts it per element and makes inf·0 a NaN."""
        bits = _SAME_WIDTH_INT.get(g.dtype.itemsize) if g.dtype.kind in "fc" else None
        if bits is None:
            return self.xp.where(mask, g, 0)
        ones = self.xp.asarray(mask, dtype=bits)   # 1 where g is kept, 0 elsewhere (an array: a 0-d mask is a scalar)
        self.xp.negative(ones, out=ones)   # all bits set where g is kept
        out = self.xp.bitwise_and(g.view(bits), ones, out=ones if ones.shape == g.shape else None)
        return out.view(g.dtype)

    def multiply_at(self, out, key, values) -> None:
        """np.multiply.at (in place, in order), which CuPy lacks: a GPU array's runs on the host."""
        if type(out) is np.ndarray:
            np.multiply.at(out, key, values)
            return
        host = backend.to_numpy(out)
        np.multiply.at(host, tuple(backend.to_numpy(k) for k in key), backend.to_numpy(values))
        out[...] = self.xp.asarray(host)

    def index_fill_zero(self, g, basic, adv=None):
        """g with zeros at g[basic][adv] (the adjoint of overwriting a region)."""
        out = g.copy()
        write(out, basic, adv, 0)
        return out

    def erf(self, a):
        return _special.erf(a)

    def to_device(self, a, device):
        return backend.to_device(a, device)

    def astype(self, a, dtype):
        return a.astype(dtype, copy=False)


def diagonal_view(xp, a, offset, d1, d2):
    """A writable view of a's diagonal, as in PyTorch (NumPy's diagonal view is read-only; CuPy's
    and the Tensor namespace's are not)."""
    d = xp.diagonal(a, offset, d1, d2)
    if type(d) is np.ndarray and not d.flags.writeable and a.flags.writeable:
        d.setflags(write=True)
    return d


def write(array, basic, adv, v) -> None:
    """array[basic][adv] = v, in place (a basic key ending in ... always gives a view)."""
    view = array[basic] if basic else array
    view[(...,) if adv is None else adv] = v


def scatter_key(xp, index, dim):
    """The key of scatter/gather along dim: index at dim, every other axis in step with it."""
    n = index.ndim
    key = [xp.arange(s).reshape((1,) * i + (s,) + (1,) * (n - i - 1)) for i, s in enumerate(index.shape)]
    key[dim] = index
    return tuple(key)


_METHODS = frozenset(k for k in vars(ArrayNamespace) if not k.startswith("_"))   # the class's own
NUMPY = ArrayNamespace(np)
_namespaces = {np: NUMPY}


def namespace(array) -> ArrayNamespace:
    if type(array) is np.ndarray:
        return NUMPY
    xp = backend.namespace_of(array)
    if xp not in _namespaces:
        _namespaces[xp] = ArrayNamespace(xp)
    return _namespaces[xp]


def given(t) -> bool:
    """An input the call gave: one it left out (no bias, no weight) is None or an empty stand-in, and its
    term is dropped."""
    return t is not None and 0 not in t.shape


def contiguous(a):
    """a, or a C-ordered copy of it (unlike np.ascontiguousarray, keeps 0-d arrays 0-d)."""
    return a if a.flags.c_contiguous else a.copy()


def _flat_rows(g, shape, index):
    """Whole rows added at one integer index (an embedding's gradient: g[k] into row index[k]) as the
    flat positions of their elements, or None. NumPy's add.at runs its fast loop on a 1-d target only
    (34 against 128 µs for 512 rows of 32 float32) and adds in the same order: each element still
    receives its rows' values in the index's order. None for anything else, and for an index out of
    range, which the general add.at then reports."""
    if type(index) is not tuple or len(index) != 1 or len(shape) < 2 or type(g) is not np.ndarray:
        return None
    (idx,) = index
    if type(idx) is not np.ndarray or idx.dtype.kind not in "iu" or g.shape != idx.shape + tuple(shape[1:]):
        return None
    if idx.size == 0 or g.size == 0:
        return None
    n, row = shape[0], g.size // idx.size
    low, high = int(np.minimum.reduce(idx, axis=None)), int(np.maximum.reduce(idx, axis=None))
    if low < -n or high >= n:
        return None
    if low < 0:
        idx = np.where(idx < 0, idx + n, idx)
    return (idx.astype(np.intp, copy=False).reshape(-1, 1) * row + np.arange(row)).reshape(-1)


def shift_max(a):
    """a.max(axis=-1, keepdims=True), for a softmax to subtract before exp (which makes ±0 alike: which
    zero a row of them gives is not kept). NumPy reduces short contiguous rows slowly (98 µs for 1,024
    rows of 32 float32, 24 µs for 512 rows of 65): rows of up to 32 are laid out as columns and reduced
    across, one pass for all rows (28 µs with the copy); longer ones are reduced as the segments of
    one flat array (reduceat: 11 µs for 512 rows of 65, 20 against 39 for 512 of 128)."""
    if type(a) is not np.ndarray or a.ndim < 2 or not a.size:
        return a.max(axis=-1, keepdims=True)
    n = a.shape[-1]
    if n > 32:
        return np.maximum.reduceat(a.reshape(-1), _row_starts(a.size, n)).reshape(a.shape[:-1] + (1,))
    columns = np.ascontiguousarray(np.moveaxis(a, -1, 0))
    return np.maximum.reduce(columns, axis=0)[..., None]


@functools.lru_cache(maxsize=64)
def _row_starts(size: int, n: int) -> np.ndarray:
    """Where each row of n starts in a flat array of size elements (made once per shape, read-only)."""
    starts = np.arange(0, size, n)
    starts.flags.writeable = False
    return starts


def as_array(data):
    """numpy scalars (what NumPy returns for 0-d results) become 0-d arrays."""
    if isinstance(data, np.generic):
        return np.asarray(data)
    return data


def shape_error(op: Op, arrays, exc) -> str:
    """PyTorch's words for a broadcast failure, naming the op and the shapes."""
    shapes = [tuple(a.shape) for a in arrays]
    if "broadcast" in str(exc) and (message := broadcast_error(*shapes)):
        name = op.torch_name[:-9] if op.torch_name[-9:-1] == "Backward" else op.name   # MulBackward0: Mul
        return (f"{message} (in {name}: shapes {' and '.join(str(list(s)) for s in shapes)}; "
                f"make the shapes broadcastable, e.g. with unsqueeze or reshape)")
    return f"{op.name}: {exc} (input shapes {', '.join(str(list(s)) for s in shapes)})"


def broadcast_error(*shapes) -> str | None:
    """PyTorch's words when the shapes do not broadcast (None when they do): as its TensorIterator,
    the shape broadcast so far (tensor a) against the next one (tensor b)."""
    a = ()
    for b in shapes:
        n = max(len(a), len(b))
        pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
        for d in reversed(range(n)):
            if pa[d] != pb[d] and 1 not in (pa[d], pb[d]):
                return (f"The size of tensor a ({pa[d]}) must match the size of tensor b ({pb[d]}) at "
                        f"non-singleton dimension {d}")
        a = tuple(x if y == 1 else y for x, y in zip(pa, pb))
    return None


def broadcast_shape(*shapes) -> tuple:
    """The shape the shapes broadcast to, or PyTorch's RuntimeError when they do not."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError as exc:
        raise RuntimeError(broadcast_error(*shapes) or str(exc)) from None


def expand_error(src: tuple, target: tuple, type_name: str) -> str | None:
    """PyTorch's words when a tensor of shape src cannot expand to target (None when it can)."""
    if len(src) > len(target):
        return (f"expand({type_name}{{{list(src)}}}, size={list(target)}): the number of sizes provided "
                f"({len(target)}) must be greater or equal to the number of dimensions in the tensor ({len(src)})")
    for i in range(1, len(src) + 1):
        s, t = src[-i], target[-i]
        if s != t and s != 1:
            return (f"The expanded size of the tensor ({t}) must match the existing size ({s}) at non-singleton "
                    f"dimension {len(target) - i}.  Target sizes: {list(target)}.  Tensor sizes: {list(src)}")
    return None


