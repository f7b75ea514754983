"""Graph events, the bus that carries them, and the plain values they carry.

The engine and `apply` emit an event only after checking `listening()` (one flag), so
an engine with no listener builds no event at all. Every event keeps the live objects
it is about (`node`, `tensor`, `step`) for listeners in the same program, and an
`info` field of plain values turned into Previews when the event is emitted: what a
Recorder reads to build a Trace (later in-place writes cannot change a preview).

Listeners are called on the thread that emits; a listener subscribed with
`thread=threading.get_ident()` hears only its own thread's events. A listener that
raises is reported with a warning and never breaks the user's forward or backward.
"""
from __future__ import annotations

import linecache
import os
import sys
import threading
import warnings
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import backend

PREVIEW_MAX = 64   # tensors up to this many elements keep their values (an 8×8 grid in the step panel)
THUMB_CELLS = 16   # larger ones keep a heatmap of at most 16×16 block means

_lock = threading.Lock()
_listeners: tuple = ()     # (listener, thread ident or None); truthy exactly when someone listens


def listening() -> bool:
    return bool(_listeners)


def emit(event) -> None:
    me = None
    for listener, thread in _listeners:
        if thread is not None:
            me = threading.get_ident() if me is None else me
            if thread != me:
                continue
        try:
            listener(event)
        except Exception as exc:   # a broken view must not break the user's computation
            warnings.warn(f"gradviz event listener {getattr(listener, '__qualname__', listener)!r} raised "
                          f"{type(exc).__name__}: {exc} (while handling {type(event).__name__}); the event was "
                          "skipped", RuntimeWarning, stacklevel=2)


_jacobians = [0]   # listeners that asked for local Jacobians in NodeExecuted


def jacobians_wanted() -> bool:
    return _jacobians[0] > 0


@contextmanager
def want_jacobians():
    """While active, the engine adds each node's local Jacobian (when small) to NodeExecuted."""
    with _lock:
        _jacobians[0] += 1
    try:
        yield
    finally:
        with _lock:
            _jacobians[0] -= 1


def subscribe(listener: Callable[[Any], None], thread: int | None = None) -> Callable[[], None]:
    """Add a listener (for one thread's events only when `thread` is given); returns a
    function that removes it."""
    global _listeners
    entry = (listener, thread)
    with _lock:
        _listeners = _listeners + (entry,)

    def unsubscribe() -> None:
        global _listeners
        with _lock:
            if entry in _listeners:
                items = list(_listeners)
                items.remove(entry)
                _listeners = tuple(items)
    return unsubscribe


@contextmanager
def listen(listener: Callable[[Any], None], thread: int | None = None):
    unsubscribe = subscribe(listener, thread)
    try:
        yield listener
    finally:
        unsubscribe()


# -- what a view may know about a tensor -------------------------------------------------
@dataclass
class Preview:
    """What a label can say about a tensor: shape, dtype, and its values or a summary."""
    shape: tuple
    dtype: str
    device: str = "cpu"
    values: np.ndarray | None = None     # a copy, when numel <= PREVIEW_MAX
    stats: tuple | None = None           # (min, mean, max) of any numeric tensor
    thumb: np.ndarray | None = None      # block means (at most THUMB_CELLS a side), when values are not kept

    @classmethod
    def of(cls, array, limit: int = PREVIEW_MAX) -> "Preview | None":
        if array is None:
            return None
        array = getattr(array, "_data", array)   # a gradviz Tensor (a gradient under create_graph)
        if not hasattr(array, "shape"):
            array = np.asarray(array)
        dev = str(backend.device_of(array))
        a = backend.to_numpy(array)
        shape = tuple(int(s) for s in a.shape)
        dtype = str(a.dtype)
        if not a.size or a.dtype.kind not in "fiub":
            return cls(shape, dtype, dev, values=np.array(a, copy=True) if a.size <= limit else None)
        af = a.astype(np.float64)
        with np.errstate(all="ignore"):
            stats = (float(af.min()), float(af.mean()), float(af.max()))
        if a.size <= limit:
            return cls(shape, dtype, dev, values=np.array(a, copy=True), stats=stats)
        return cls(shape, dtype, dev, stats=stats, thumb=block_means(af))

    def to_json(self) -> dict:
        out: dict = {"shape": list(self.shape), "dtype": self.dtype, "device": self.device}
        if self.values is not None:
            out["values"] = _json_values(self.values)
        if self.stats is not None:
            out["stats"] = list(self.stats)
        if self.thumb is not None:
            out["thumb"] = {"shape": list(self.thumb.shape), "values": _json_values(self.thumb)}
        return out

    @classmethod
    def from_json(cls, data: dict | None) -> "Preview | None":
        if data is None:
            return None
        values = None
        if "values" in data:
            dtype = data["dtype"] if data["dtype"] in _NUMPY_DTYPES else "float64"
            raw = data["values"]
            values = np.array(_from_json_values(raw), dtype=dtype).reshape(tuple(data["shape"]))
        stats = tuple(data["stats"]) if data.get("stats") is not None else None
        thumb = data.get("thumb")
        if thumb is not None:
            thumb = np.array(_from_json_values(thumb["values"]), dtype=np.float64).reshape(tuple(thumb["shape"]))
        return cls(tuple(data["shape"]), data["dtype"], data.get("device", "cpu"), values, stats, thumb)


def as_matrix(a: np.ndarray) -> np.ndarray:
    """A tensor as the 2-D array a grid or heatmap draws: () -> 1×1, (n,) -> 1×n, (..., c) -> (rows, c)."""
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a.reshape(int(np.prod(a.shape[:-1])), a.shape[-1])   # not -1: a (5, 0) tensor has 0 elements


def block_means(a: np.ndarray, cells: int = THUMB_CELLS) -> np.ndarray:
    """The matrix of `a` cut into at most cells×cells blocks, each its mean over finite values."""
    m = as_matrix(a)
    rows = np.array_split(np.arange(m.shape[0]), min(cells, m.shape[0]))
    cols = np.array_split(np.arange(m.shape[1]), min(cells, m.shape[1]))
    out = np.zeros((len(rows), len(cols)))
    finite = np.isfinite(m)
    clean = np.where(finite, m, 0.0)
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            n = finite[r[0]:r[-1] + 1, c[0]:c[-1] + 1].sum()
            out[i, j] = clean[r[0]:r[-1] + 1, c[0]:c[-1] + 1].sum() / n if n else 0.0
    return out


_NUMPY_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "bool", "complex64", "complex128"}


def _json_values(values: np.ndarray):
    """Nested lists JSON can hold: non-finite floats as strings, complex as [re, im] pairs."""
    a = np.asarray(values)
    if a.dtype.kind == "c":
        return [[float(v.real), float(v.imag)] for v in a.ravel()]
    if a.dtype.kind == "f":
        return [_json_float(float(v)) for v in a.ravel()]
    return [v.item() for v in a.ravel()]


def _json_float(v: float):
    return v if np.isfinite(v) else str(v)


def _from_json_values(raw: list) -> list:
    return [complex(*v) if isinstance(v, list) else (float(v) if isinstance(v, str) else v) for v in raw]


# -- plain records the events carry --------------------------------------------------------
@dataclass
class TensorInfo:
    """A leaf or an output tensor, as a view sees it."""
    name: str
    value: Preview | None
    grad: Preview | None
    shape: tuple
    source: tuple | None = None   # (file, line, text) of the user code that made it require grad (a leaf)


@dataclass
class InputInfo:
    """One input slot of a node: where its gradient goes (next_functions) and what flowed in."""
    source: Any              # the producing node's key, or None (a constant / no grad)
    output_nr: int
    shape: tuple | None
    leaf: TensorInfo | None = None      # when `source` is a leaf's AccumulateGrad
    constant: Preview | None = None     # a small input that needs no gradient (the 2 in x * 2)
    name: str = ""                      # the learner's name for an input that needs no gradient (a target)


@dataclass
class NodeInfo:
    """Everything the Trace keeps of one grad_fn, in plain values."""
    key: Any                 # the source's stable node key (gradviz: the node counter)
    name: str                # PyTorch's node name: MulBackward0
    formula: str = ""
    vjp_formulas: tuple = ()
    symbols: tuple = ()      # this node's input symbols, one per input slot
    out_symbol: str = "c"
    latex: str = ""
    vjp_latex: tuple = ()
    broadcasts: tuple | None = ()   # input slots whose gradient may be summed (None: every slot)
    constants: tuple = ()    # (name, text) the node used: the 2 in x * 2, dim, keepdim, alpha
    attrs: tuple = ()        # (name, text) for show_attrs: params and saved tensors
    value: Preview | None = None
    scope: tuple = ()
    inputs: tuple = ()       # InputInfo per input slot
    saved: tuple = ()        # (name, Preview) the node saved for its backward
    ctx_saved: tuple = ()    # (Preview, AccumulateGrad key of a saved leaf or None): a custom Function's
                             # ctx.saved_tensors, which torchviz always draws
    n_outputs: int = 1
    source: tuple | None = None   # (file, line, text) of the user code that created it


@dataclass
class FlowInfo:
    slot: int                # which input of the node the gradient went to
    grad: Preview
    axes: tuple = ()         # axes summed to undo broadcasting


@dataclass
class AccumulationInfo:
    target: Any              # ("leaf", AccumulateGrad key) or ("output", grad_fn key, output_nr)
    contribution: Preview
    total: Preview
    before: Preview | None


@dataclass
class HookInfo:
    name: str
    output_nr: int | None
    before: Preview | None
    after: Preview | None     # None: the hook returned None (gradient unchanged)


@dataclass
class StepInfo:
    node: Any                # the node key that ran
    grad_in: tuple           # Preview per output of the node
    flows: tuple = ()        # FlowInfo per edge gradient was sent along
    accumulations: tuple = ()
    hooks: tuple = ()
    jacobians: tuple | None = None   # the node's local Jacobian per input slot (arrays), when small


# -- the events ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NodeCreated:
    """An op ran with grad enabled: `node` (its grad_fn) now exists."""
    node: Any
    inputs: tuple
    outputs: tuple
    scope: tuple
    info: NodeInfo | None = None


@dataclass(frozen=True, slots=True)
class BackwardStarted:
    roots: tuple          # (node, output_nr) per root tensor
    seeds: tuple          # the seed gradient (array) per root
    implicit: tuple = ()  # per root: True when backward() made the seed itself (a scalar's 1)


@dataclass(frozen=True, slots=True)
class NodeExecuted:
    """One VJP ran; `step` is the engine's Step (grads in, grads out per edge)."""
    step: Any
    info: StepInfo | None = None


@dataclass(frozen=True, slots=True)
class GradAccumulated:
    tensor: Any           # the tensor whose .grad changed
    node: Any             # the node that wrote it (AccumulateGrad, or the grad_fn for retain_grad)
    contribution: Any     # array added
    total: Any            # array now in .grad
    before: Any = None    # array in .grad before (None: it was None)


@dataclass(frozen=True, slots=True)
class HookFired:
    node: Any
    output_nr: int
    hook: Any
    before: Any
    after: Any            # None when the hook returned None (gradient unchanged)


@dataclass(frozen=True, slots=True)
class BackwardFinished:
    steps: int


@dataclass(frozen=True, slots=True)
class TangentComputed:
    """Forward mode: an op pushed its inputs' tangents to its output(s) (J·t)."""
    op: Any               # the Op record
    inputs: tuple         # the primal inputs (Tensors)
    outputs: tuple        # the primal outputs
    tangents_in: tuple    # one tangent (Tensor) or None per input
    tangents_out: tuple   # one tangent per output
    rule: str             # 'explicit', 'pointwise', 'linear', 'bilinear' or 'transpose' (derived from the VJP)
    params: tuple = ()    # the op's non-tensor arguments (dim, the 2 of x * 2), as the forward got them


# -- source tracking ---------------------------------------------------------------------------
# Off in plain scripts (the frame walk costs about a microsecond per op); on by default in a
# notebook kernel and in `gradviz render|animate`. The line is kept beside the node, so a
# graph drawn after the forward ran still knows which line made each node.
tracking_sources = False
_sources: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def set_source_tracking(enabled: bool) -> None:
    """Record the line of user code that creates each node (file, line number, text)."""
    global tracking_sources
    tracking_sources = bool(enabled)


def source_tracking() -> bool:
    return tracking_sources


def remember_source(node, skip: int = 1) -> None:
    """Keep the user line that is creating `node` (called by the op that creates it)."""
    found = user_source(skip + 1)
    if found is not None:
        _sources[node] = found


# Leaves by id: a tensor compares elementwise, so it cannot be a WeakKeyDictionary key; the weak
# reference's callback drops the entry when the tensor goes.
_leaf_sources: dict = {}


def remember_leaf_source(tensor, skip: int = 1) -> None:
    """Keep the user line that made `tensor` a leaf that requires grad (the first such line)."""
    key = id(tensor)
    entry = _leaf_sources.get(key)
    if entry is not None and entry[0]() is tensor:
        return
    found = user_source(skip + 1)
    if found is not None:
        _leaf_sources[key] = (weakref.ref(tensor, lambda _, key=key: _leaf_sources.pop(key, None)), found)


def leaf_source_of(tensor) -> tuple | None:
    """(file, line, text) of the user code that made a leaf tensor require grad, when it was recorded."""
    entry = _leaf_sources.get(id(tensor))
    return entry[1] if entry is not None and entry[0]() is tensor else None


def source_of(node) -> tuple | None:
    """(file, line, text) of the user code that created `node`, when it was recorded."""
    return _sources.get(node)


def in_notebook() -> bool:
    """True inside a Jupyter kernel (JupyterLab, Notebook, VS Code, Colab)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return type(shell).__name__ in ("ZMQInteractiveShell", "Shell")


def code_around(sources) -> dict:
    """{file: (first line, [lines])}: the block of each file from the first to the last line
    that made a node, read now (IPython keeps each cell's text in linecache)."""
    spans: dict = {}
    for file, line, _ in sources:
        lo, hi = spans.get(file, (line, line))
        spans[file] = (min(lo, line), max(hi, line))
    code = {}
    for file, (lo, hi) in spans.items():
        lines = [linecache.getline(file, k).rstrip("\n") for k in range(lo, hi + 1)]
        if any(lines):
            code[file] = (lo, lines)
    return code


def user_source(skip: int = 1) -> tuple | None:
    """(file, line, text) of the innermost frame outside gradviz, or None."""
    frame = sys._getframe(skip)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    filename, line = frame.f_code.co_filename, frame.f_lineno
    return filename, line, linecache.getline(filename, line).strip()
