"""PyTorch's tensor printing (tensor([...], requires_grad=True)), digit for digit."""
from __future__ import annotations

import math

import numpy as np

from . import backend, dtypes
from .autograd.forward_ad import tangent_of



class _PrintOptions:
    """torch's PRINT_OPTS: set with set_printoptions, read at every repr."""

    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """torch.set_printoptions: digits, summarization and line width of tensor printing."""
    if profile is not None:
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return {"precision": PRINT_OPTS.precision, "threshold": PRINT_OPTS.threshold,
            "edgeitems": PRINT_OPTS.edgeitems, "linewidth": PRINT_OPTS.linewidth, "sci_mode": PRINT_OPTS.sci_mode}


class printoptions:
    """with torch.printoptions(precision=2): ... restores the previous options on exit."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def __enter__(self):
        self.old = get_printoptions()
        set_printoptions(**self.kwargs)

    def __exit__(self, *exc):
        set_printoptions(**self.old)
        return False


class _Formatter:
    """Chooses one width and one notation (int-like, fixed, scientific) for all elements."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat:
                self.max_width = max(self.max_width, len(_plain(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return                                   # torch ignores sci_mode here too
        absv = np.abs(finite)
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)
        if self.sci_mode:
            texts = (f"{v:.{PRINT_OPTS.precision}e}" for v in finite)
        elif self.int_mode:
            texts = (f"{v:.0f}." for v in finite)   # the trailing dot says "floating point"
        else:
            texts = (f"{v:.{PRINT_OPTS.precision}f}" for v in finite)
        self.max_width = max(len(t) for t in texts)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            value = float(value)
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            text = _plain(value)
        return (self.max_width - len(text)) * " " + text


def _plain(v) -> str:
    if isinstance(v, (np.bool_, bool)):
        return str(bool(v))
    return str(int(v))


def _summarize(a: np.ndarray) -> np.ndarray:
    """The elements that will be shown (edge items of every dim) for the formatter's width."""
    if a.ndim == 0:
        return a
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 1:
        # torch's cat(a[:edge], a[-edge:]): with edgeitems=0 that is the whole vector
        return np.concatenate([a[:edge], a[-edge:]]) if a.shape[0] > 2 * edge else a
    if not edge:
        return a[(slice(0, 0),) * a.ndim]
    if a.shape[0] > 2 * edge:
        parts = [_summarize(x) for x in list(a[:edge]) + list(a[-edge:])]
    else:
        parts = [_summarize(x) for x in a]
    return np.stack(parts) if parts else a


def _vector_str(a, indent, fmt, summarize):
    element_length = fmt.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        items = [fmt.format(v) for v in a[:edge]] + [" ..."] + [fmt.format(v) for v in a[-edge:]]
    else:
        items = [fmt.format(v) for v in a]
    lines = [items[i:i + per_line] for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(", ".join(line) for line in lines) + "]"


def _tensor_str(a, indent, fmt, summarize):
    dim = a.ndim
    if dim == 0:
        return fmt.format(a.item())
    if dim == 1:
        return _vector_str(a, indent, fmt, summarize)
    edge = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * edge:
        slices = ([_tensor_str(a[i], indent + 1, fmt, summarize) for i in range(edge)] + ["..."]
                  + [_tensor_str(a[i], indent + 1, fmt, summarize) for i in range(a.shape[0] - edge, a.shape[0])])
    else:
        slices = [_tensor_str(a[i], indent + 1, fmt, summarize) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def values_str(array, indent: int = 0) -> str:
    """The bracketed values alone, as PyTorch prints them inside tensor(...)."""
    a = backend.to_numpy(array)
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarize(a) if summarize else a
    if a.dtype == np.float16:
        shown = shown.astype(np.float32)
    fmt = _Formatter(shown, a.dtype.kind == "f")
    return _tensor_str(a, indent, fmt, summarize)


def _add_suffixes(text, suffixes, indent, force_newline):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    prefix = "tensor("
    indent = len(prefix)
    a = t._data
    suffixes = []
    dev = t.device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    text = values_str(a, indent)
    if a.size == 0 and a.ndim != 1 or a.size and not PRINT_OPTS.edgeitems:
        suffixes.append(f"size={tuple(a.shape)}")
    default = {"f": dtypes.get_default_dtype().np, "i": np.dtype(np.int64), "b": np.dtype(np.bool_)}
    if a.dtype != default.get(a.dtype.kind) or a.size == 0 and a.dtype != dtypes.get_default_dtype().np:
        suffixes.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.op.torch_name}>")   # the type name, as torch
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    tangent = tangent_of(t)
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")   # a dual tensor (forward mode), as torch prints it
    return _add_suffixes(prefix + text, suffixes, indent, force_newline=False)
