"""torch tensors -> Previews, at the cost of the work: a small tensor's values copied, a large
one's min, mean and max and its heatmap of block means reduced by torch on the tensor's own
device (one pass each; only the 16×16 means and three numbers cross to NumPy), so previewing
every gradient of a backward costs a fraction of computing it."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..previews import PREVIEW_MAX, THUMB_CELLS, Preview, block_means
from .support import dtype_name, torch_module


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
        stats = _stats(torch, x)
        return Preview(shape, dtype, device, stats=stats, thumb=_thumb(torch, x, stats))
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


def _stats(torch, x) -> tuple:
    low, high = torch.aminmax(x)
    return tuple(float(v) for v in torch.stack([low, x.mean(), high]).tolist())


def _thumb(torch, x, stats: tuple) -> np.ndarray:
    """block_means of the tensor, the blocks summed by torch (np.array_split's blocks)."""
    if not all(np.isfinite(stats)):   # NaN or inf somewhere: block_means skips them
        return block_means(x.cpu().numpy().astype(np.float64))
    shape = tuple(x.shape)
    rows, cols = (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else (x.numel() // shape[-1], shape[-1])
    m = x.reshape(rows, cols)   # as_matrix's 2-D form
    row_of, row_sizes = _blocks(rows, min(THUMB_CELLS, rows))
    col_of, col_sizes = _blocks(cols, min(THUMB_CELLS, cols))
    sums = m.new_zeros((len(row_sizes), cols)).index_add_(0, row_of.to(m.device), m)
    sums = sums.new_zeros((len(row_sizes), len(col_sizes))).index_add_(1, col_of.to(m.device), sums)
    return sums.double().cpu().numpy() / np.outer(row_sizes, col_sizes)


@lru_cache(maxsize=256)
def _blocks(n: int, cells: int):
    """(the block of each of n indices, the block sizes) for n split into `cells` as np.array_split does."""
    torch = torch_module()
    sizes = np.array([len(c) for c in np.array_split(np.arange(n), cells)])
    return torch.repeat_interleave(torch.arange(cells), torch.from_numpy(sizes)), sizes
