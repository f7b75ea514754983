"""torch tensors -> Previews, at the cost of the work: a small tensor's values copied, a large
one's min, mean and max and its heatmap of block means in two passes over it (the extremes, then
the block sums, whose total is the mean), with no float64 copy. A small CPU tensor is read in place
through NumPy (a torch call costs more than the arithmetic); a large one, or one on another device,
is reduced by torch where it is, and only the 16×16 sums and two numbers cross to the host."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..previews import PREVIEW_MAX, THUMB_CELLS, Preview, block_means
from .support import dtype_name, torch_module


# up to this many elements a CPU tensor is reduced by NumPy (a torch call's overhead costs more than
# the arithmetic); beyond it torch's vectorised reductions are several times faster than NumPy's
_NUMPY_MAX = 8192


def preview(tensor, limit: int = PREVIEW_MAX) -> Preview | None:
    """A Preview of a torch tensor, taken now (later in-place updates do not change it)."""
    if tensor is None:
        return None
    torch = torch_module()
    t = tensor.detach()
    shape, dtype, device = tuple(t.shape), dtype_name(t.dtype), str(t.device)
    if t.is_meta or t.layout != torch.strided:
        return Preview(shape, dtype, device)
    try:
        n = t.numel()
        if n <= limit:
            if t.dtype in (torch.bfloat16, torch.complex32):   # NumPy has no such dtype
                t = t.to(torch.complex64 if t.is_complex() else torch.float32)
            values = np.array(t.cpu().resolve_conj().resolve_neg().numpy(), copy=True)
            return Preview(shape, dtype, device, values=values, stats=_small_stats(values))
        if t.is_complex() or n == 0:
            return Preview(shape, dtype, device)
        x = t if t.dtype in (torch.float32, torch.float64) else t.to(torch.float32)
        if x.device.type == "cpu" and n <= _NUMPY_MAX:
            x = x.resolve_neg().numpy()   # a view of the same memory: nothing copied
        return Preview(shape, dtype, device, None, *_summary(x))
    except (RuntimeError, TypeError):   # a tensor subclass with no data to read (fake, functional)
        return Preview(shape, dtype, device)


def _small_stats(values: np.ndarray) -> tuple | None:
    """min, mean and max of a small tensor's values, as Preview.of keeps them (a label shows them
    where it has no room for the values themselves)."""
    if not values.size or values.dtype.kind not in "fiub":
        return None
    v = values.astype(np.float64)
    with np.errstate(all="ignore"):
        return (float(v.min()), float(v.mean()), float(v.max()))


def _summary(x) -> tuple:
    """((min, mean, max), block means) of a large tensor (a NumPy view, or a torch tensor off the CPU)."""
    if isinstance(x, np.ndarray):
        low, high = float(x.min()), float(x.max())
    else:
        low, high = (float(v) for v in torch_module().aminmax(x))
    if not (np.isfinite(low) and np.isfinite(high)):   # NaN or inf somewhere: block_means skips them
        a = (x if isinstance(x, np.ndarray) else x.cpu().numpy()).astype(np.float64)
        with np.errstate(all="ignore"):
            return (float(a.min()), float(a.mean()), float(a.max())), block_means(a)
    shape = tuple(x.shape)
    rows, cols = (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else (x.size // shape[-1] if isinstance(
        x, np.ndarray) else x.numel() // shape[-1], shape[-1])
    m = x.reshape(rows, cols)   # as_matrix's 2-D form
    sums = _block_sums(_block_sums(m, 0, min(THUMB_CELLS, rows)), 1, min(THUMB_CELLS, cols))
    sums = sums.astype(np.float64) if isinstance(sums, np.ndarray) else sums.double().cpu().numpy()
    thumb = sums / np.outer(_sizes(rows, min(THUMB_CELLS, rows)), _sizes(cols, min(THUMB_CELLS, cols)))
    return (low, float(sums.sum()) / (rows * cols), high), thumb


def _block_sums(m, dim: int, cells: int):
    """m (2-D, NumPy or torch) summed over the blocks np.array_split cuts along `dim`: the first
    n % cells blocks are one longer than the rest, so two reshapes and two sums do it in one pass."""
    n = m.shape[dim]
    q, r = divmod(n, cells)
    head = r * (q + 1)
    parts = []
    for start, stop, count, size in ((0, head, r, q + 1), (head, n, cells - r, q)):
        if count:
            part = m[start:stop] if dim == 0 else m[:, start:stop]
            shape = (count, size, m.shape[1]) if dim == 0 else (m.shape[0], count, size)
            parts.append(part.reshape(shape).sum(dim + 1))
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts, dim) if isinstance(m, np.ndarray) else torch_module().cat(parts, dim)


@lru_cache(maxsize=256)
def _sizes(n: int, cells: int) -> np.ndarray:
    """The sizes of the blocks np.array_split cuts n into."""
    q, r = divmod(n, cells)
    return np.array([q + 1] * r + [q] * (cells - r))


class RecentPreviews:
    """Previews of the tensors the last two nodes of a backward handled, by storage and version: the
    gradient a node sends is the one the next node receives, and the one an AccumulateGrad writes
    as .grad, so it is previewed once. Entries hold their tensor, so no storage is reused under them."""

    def __init__(self):
        self.now: dict = {}
        self.before: dict = {}

    def of(self, tensor) -> Preview | None:
        if tensor is None:
            return None
        key = _identity(tensor)
        if key is None:
            return preview(tensor)
        hit = self.now.get(key) or self.before.get(key)
        if hit is None:
            hit = (tensor, preview(tensor))
        self.now[key] = hit
        return hit[1]

    def next_node(self) -> None:
        self.before, self.now = self.now, {}


def _identity(tensor):
    try:
        return (tensor.data_ptr(), tensor._version, tuple(tensor.shape), tensor.stride(), tensor.dtype,
                tensor.device)
    except (RuntimeError, NotImplementedError):   # no storage to name (sparse, meta, functional)
        return None
