"""torch tensors -> Previews, at the cost of the work: a small tensor's values copied, a large
one's min, mean and max and its heatmap of block means in two passes over it (the extremes, then
the block sums, whose total is the mean), with no float64 copy. A small CPU tensor is read in place
through NumPy (a torch call costs more than the arithmetic); a large one, or one on another device,
is reduced by torch where it is, and only the 16×16 sums and two numbers cross to the host.

A recording previews lazily (`Previews`): its LazyPreviews hold their tensor and read it when a
view first asks for values, so a backward recorded and never looked at costs no reduction at all.
A view that needs only a gradient's extremes (an edge's width) reads them alone, one pass; the mean
and the heatmap wait for a view that shows them (a step panel). A backward run through for a view
that reads every value at once (`animate`) previews each gradient whole as torch hands it over
instead (`Taken`), while it is still in the cache, and holds none."""
from __future__ import annotations

import threading
import weakref
from functools import lru_cache

import numpy as np

from ..previews import PREVIEW_MAX, THUMB_CELLS, Preview, block_means
from .support import device_name, dtype_name, torch_module


# up to this many elements a CPU tensor is reduced by NumPy (a torch call's overhead costs more than
# the arithmetic); beyond it torch's vectorised reductions are several times faster than NumPy's
_NUMPY_MAX = 8192


def preview(tensor, limit: int = PREVIEW_MAX, ends: tuple | None = None) -> Preview | None:
    """A Preview of a torch tensor, taken now (later in-place updates do not change it). ends: the
    tensor's (min, max) as `_extremes` found them, where it has not changed since."""
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
            values = _numpy(torch, t).copy()
            return Preview(shape, dtype, device, values=values, stats=_small_stats(values))
        if t.is_complex() or n == 0:
            return Preview(shape, dtype, device)
        return Preview(shape, dtype, device, None, *_summary(_summed(torch, t), ends))
    except (RuntimeError, TypeError):   # a tensor subclass with no data to read (fake, functional)
        return Preview(shape, dtype, device)


def _extremes(tensor) -> tuple | None:
    """(min, max) of a tensor that preview() summarises (more than PREVIEW_MAX real numbers), as its
    stats will say them, read in one pass; None for any other tensor (preview it whole: a small one
    costs less than a second look)."""
    torch = torch_module()
    t = tensor.detach()
    if t.is_meta or t.layout != torch.strided or t.numel() <= PREVIEW_MAX or t.is_complex():
        return None
    try:
        return _ends(_summed(torch, t))
    except (RuntimeError, TypeError):   # no data to read: preview() says so
        return None


def _summed(torch, t):
    """The large real tensor `t` as _summary reads it: float32 or float64, a NumPy view where NumPy's
    reductions cost less than torch's call."""
    x = t if t.dtype in (torch.float32, torch.float64) else t.to(torch.float32)
    if x.device.type == "cpu" and t.numel() <= _NUMPY_MAX:
        x = _numpy(torch, x)   # a view of the same memory: nothing copied
    return x


def _numpy(torch, t) -> np.ndarray:
    """The tensor's values as a NumPy array, a view where torch allows one (a CPU tensor of a dtype
    NumPy has, with no lazy negation or conjugation), else a copy made so."""
    if t.device.type == "cpu" and t.dtype not in (torch.bfloat16, torch.complex32):
        try:
            return t.numpy()
        except (RuntimeError, TypeError):   # a view with the neg or conj bit set
            pass
    if t.dtype in (torch.bfloat16, torch.complex32):   # NumPy has no such dtype
        t = t.to(torch.complex64 if t.is_complex() else torch.float32)
    return t.cpu().resolve_conj().resolve_neg().numpy()


def _small_stats(values: np.ndarray) -> tuple | None:
    """min, mean and max of a small tensor's values, as Preview.of keeps them (a label shows them
    where it has no room for the values themselves)."""
    if not values.size or values.dtype.kind not in "fiub":
        return None
    v = values.astype(np.float64)
    return (float(v.min()), float(v.sum()) / v.size, float(v.max()))   # sum / size: np.mean costs more here


def _ends(x) -> tuple:
    """(min, max) of `x` (a NumPy array or a torch tensor)."""
    if isinstance(x, np.ndarray):
        return float(x.min()), float(x.max())
    return tuple(float(v) for v in torch_module().aminmax(x))


def _summary(x, ends: tuple | None = None) -> tuple:
    """((min, mean, max), block means) of a large tensor (a NumPy view, or a torch tensor where torch
    reduces faster); ends: its (min, max), where already read."""
    low, high = _ends(x) if ends is None else ends
    if not (np.isfinite(low) and np.isfinite(high)):   # NaN or inf somewhere: block_means skips them
        a = (x if isinstance(x, np.ndarray) else x.cpu().numpy()).astype(np.float64)
        with np.errstate(all="ignore"):
            return (float(a.min()), float(a.mean()), float(a.max())), block_means(a)
    shape = tuple(x.shape)
    rows, cols = (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else (x.size // shape[-1] if isinstance(
        x, np.ndarray) else x.numel() // shape[-1], shape[-1])
    m = x.reshape(rows, cols)   # as_matrix's 2-D form
    r, c = min(THUMB_CELLS, rows), min(THUMB_CELLS, cols)
    # rows first, one axis at a time: the first pass keeps whole rows contiguous (a sum over both block
    # axes at once is up to 13 times slower in torch and NumPy where a row is 32 or 64 long)
    sums = _block_sums(_block_sums(m, 0, r), 1, c)
    sums = sums.astype(np.float64) if isinstance(sums, np.ndarray) else sums.double().cpu().numpy()
    thumb = sums / np.outer(_sizes(rows, r), _sizes(cols, c))
    return (low, float(sums.sum()) / (rows * cols), high), thumb


def _block_sums(m, dim: int, cells: int):
    """m (2-D, NumPy or torch) summed over the blocks np.array_split cuts along `dim`: the first
    n % cells blocks are one longer than the rest, so two reshapes and two sums do it in one pass."""
    n = m.shape[dim]
    if n == cells:   # a block per row (column): nothing to sum
        return m
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


# the most bytes of tensors one recording's lazy previews hold; past it previews are taken at once
HELD_MAX = 512 * 2 ** 20
_FILLING = threading.Lock()


def _lazy_field(name: str) -> property:
    """A Preview field read from the held tensor on first use."""
    def get(self):
        if self.__dict__.get("_source") is not None:
            self._fill()
        return self.__dict__.get(name)

    def put(self, value) -> None:
        self.__dict__[name] = value
    return property(get, put)


class LazyPreview(Preview):
    """A Preview whose values, stats and heatmap are read from its tensor when first asked for:
    the same fields, equal to `preview(tensor)` taken at once, unless the tensor was written in
    place meanwhile (its version counter moved, or a sample of its values changed: a write
    through `.data` moves no counter); then the preview keeps only shape, dtype and device,
    never a later value. The tensor is held until then: `extremes()` (an edge's width) reads a
    large tensor's min and max and holds it on for the mean and the heatmap."""

    values = _lazy_field("values")
    stats = _lazy_field("stats")
    thumb = _lazy_field("thumb")

    @classmethod
    def hold(cls, tensor, sample: bytes | None, version: int | None = None) -> "LazyPreview":
        """tensor: the tensor (detached where `sample` is given). sample: `_sample(tensor)`, compared
        again when filling, or None (the engine's own gradients, which nothing else can write, need
        only the version). version: the version the values to show had (default: the tensor's now)."""
        self = cls.__new__(cls)
        self.__dict__.update(shape=tuple(tensor.shape), dtype=dtype_name(tensor.dtype),
                             device="cpu" if tensor.is_cpu else device_name(tensor.device),
                             _source=(tensor, tensor._version if version is None else version, sample))
        return self

    def __getstate__(self) -> dict:
        """Pickled (or copied) with its fields read: the tensor and its version stay here."""
        if self.__dict__.get("_source") is not None:
            self._fill()
        return dict(self.__dict__)

    def extremes(self) -> tuple | None:
        """(min, max), as `stats` will say them: a large tensor's read alone (the mean and the heatmap
        wait for a view that shows them), a small one's preview made whole."""
        with _FILLING:
            source = self.__dict__.get("_source")
            if source is not None and "_ends" not in self.__dict__:
                ends = _extremes(source[0]) if _unchanged(*source) else None
                if ends is None:   # small, not summarised, or written since: the whole preview now
                    self._fill_now()
                else:
                    self.__dict__["_ends"] = ends
            if self.__dict__.get("_source") is not None:
                return self.__dict__["_ends"]
        return Preview.extremes(self)

    def _fill(self) -> None:
        with _FILLING:   # one thread reads the tensor; another asking meanwhile waits for its fields
            self._fill_now()

    def _fill_now(self) -> None:
        source = self.__dict__.get("_source")
        if source is None:
            return
        ends = self.__dict__.pop("_ends", None)
        full = preview(source[0], ends=ends) if _unchanged(*source) else None
        self.__dict__.update(values=getattr(full, "values", None), stats=getattr(full, "stats", None),
                             thumb=getattr(full, "thumb", None))
        del self.__dict__["_source"]   # last: the fields are there before anyone stops waiting


def _unchanged(tensor, version: int, sample: bytes | None) -> bool:
    """Whether a held tensor still has the values it was held for (see LazyPreview)."""
    return tensor._version == version and (sample is None or _sample(tensor) == sample)


def _sample(tensor) -> bytes | None:
    """Up to 17 evenly spaced values of a contiguous CPU tensor, as bytes (read in place); None
    for any other tensor."""
    if not tensor.is_contiguous():
        return None
    try:
        a = tensor.numpy().reshape(-1)
    except (RuntimeError, TypeError):   # not on the CPU, a dtype NumPy lacks, neg or conj bit set
        return None
    return a[::max(1, a.size // 16)].tobytes()


class Previews:
    """The previews one recording takes, lazily and each tensor's once: the gradient a node sends
    is the one the next node receives. A LazyPreview holds its tensor, so no other tensor takes its
    id meanwhile, and so torch's engine, which writes a gradient in place only where nothing else
    holds it, leaves every held gradient as it was previewed."""

    def __init__(self, held_max: int = HELD_MAX):
        self.seen: dict = {}   # id(tensor) -> (tensor, Preview)
        self.held, self.held_max = 0, held_max

    def of(self, tensor, sample: bool = False, version: int | None = None) -> Preview | None:
        """A lazy preview of `tensor`. sample: the tensor is one the caller holds too (a leaf, a
        saved output), so a write through `.data` must be seen as well. version: of an engine's
        gradient, the version it had when torch handed it over (a hook may write it in place since)."""
        if tensor is None:
            return None
        hit = self.seen.get(id(tensor))
        if hit is not None:
            return hit[1]
        size = tensor.numel() * tensor.element_size()   # (.nbytes refuses a sparse tensor)
        if self.held + size > self.held_max or tensor.is_meta or tensor.layout != torch_module().strided:
            made = _taken(tensor, version)   # no data to hold (meta), or a layout preview() describes by its shape
        elif not sample:   # the engine's own gradient: nothing but torch can write it (preview() detaches)
            self.held += size
            made = LazyPreview.hold(tensor, None, version)
        else:   # held only where a write through .data could be seen (or cannot happen: off the CPU)
            t = tensor.detach()
            check = _sample(t) if t.is_cpu else None
            if check is None and t.is_cpu:
                made = preview(t)
            else:
                self.held += size
                made = LazyPreview.hold(t, check)
        self.seen[id(tensor)] = (tensor, made)
        return made


def _taken(tensor, version: int | None) -> Preview:
    """preview(tensor) now, or its shape alone where it was written in place since `version`."""
    if version is not None and tensor._version != version:
        return Preview(tuple(tensor.shape), dtype_name(tensor.dtype), device_name(tensor.device))
    return preview(tensor)


class Taken:
    """The previews of a backward run through for a view that shows them all (animate): each gradient
    previewed whole inside torch's hook, as torch hands it over (a second pass over it, later, no
    longer finds it in the cache), and each once: the gradient a node sends is the one the next
    receives. No tensor is held (torch's engine frees each as it goes): a weak reference and the
    version counter tell the same tensor with the same values (torch's engine adding into a
    gradient in place bumps its version)."""

    def __init__(self):
        self.seen: dict = {}   # id(tensor) -> (weak reference, version, Preview)

    def all(self, tensors) -> tuple:
        """The previews of a hook's gradients (None where torch gives none)."""
        return tuple(None if t is None else self.of(t) for t in tensors)

    def of(self, tensor) -> Preview:
        version = tensor._version
        hit = self.seen.get(id(tensor))
        if hit is not None and hit[0]() is tensor and hit[1] == version:
            return hit[2]
        made = preview(tensor)
        try:
            self.seen[id(tensor)] = (weakref.ref(tensor), version, made)
        except TypeError:   # a tensor type with no weak references: previewed each time it is met
            pass
        return made
