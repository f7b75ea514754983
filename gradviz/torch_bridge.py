"""The torch bridge: a real PyTorch autograd graph as a second origin of gradviz's events.

Owns three things, all optional and all importing torch lazily:

- `trace_from_torch(*tensors)`: walks `grad_fn`, `next_functions`, `AccumulateGrad.variable`
  and the `_saved_*` attributes (as torchviz does) and feeds one NodeCreated per node, in
  creation order, to the same `tracing.Recorder` that gradviz's own graphs go through, so
  the renderer and the player draw a PyTorch model exactly as their own.
- `record_torch_backward(*tensors)`: runs torch's own backward with hooks on every node of
  the graph, so each node torch's engine executes becomes a NodeExecuted event (the gradient
  it received, the gradient it sent along each edge, the `.grad` it wrote), in torch's order;
  afterwards every `.grad` is as it was before.
- `record_forward(module=None)`: a context manager that watches a forward pass for what the
  finished graph no longer says: which `nn.Module` created each node (diagram clusters, named
  as gradviz.nn names its scopes) and the value each op produced (node labels).

Torch knows nothing of gradviz; only the public entry points that take torch tensors
(draw, make_dot, the CLI) import this module.
"""
from __future__ import annotations

import heapq
import math
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from .autograd.engine import broadcast_axes
from .events import NodeCreated, NodeExecuted
from .previews import PREVIEW_MAX, Preview, block_means
from .records import Accumulation, InputRecord, NodeRecord, StepRecord, TensorRecord
from .formatting import shape as shape_text
from .tracing import Output, Recorder, Trace
from .tracing.recording import Recording
from .autograd.graph import ACCUMULATE_GRAD
from .nn import functional as nn_functional
from .ops import pointwise, registry
from .ops.op import Op

TORCH_REQUIREMENT = "torch==2.13.0"

# torch gives AccumulateGrad the largest sequence number (so its ready queue runs it first);
# it says nothing about when the node was created.
_NO_SEQUENCE = 2 ** 64 - 1

def _torch():
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"gradviz.torch_bridge needs PyTorch, which is not installed: "
                          f"pip install {TORCH_REQUIREMENT}") from exc
    return torch


@lru_cache(maxsize=None)
def _op_table() -> dict:
    """gradviz's op records by PyTorch node name (the ops registry, then the records of
    gradviz.nn.functional), so a torch node gets gradviz's formulas and symbols."""
    table = {"AccumulateGrad": ACCUMULATE_GRAD, **registry.by_torch_name()}
    for value in vars(nn_functional).values():
        if isinstance(value, Op) and value.vjp is not None:
            table.setdefault(value.torch_name, value)
    return table


# -- tensors -> Previews ---------------------------------------------------------------
def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _preview(tensor, limit: int = PREVIEW_MAX) -> Preview | None:
    """A Preview of a torch tensor, taken now (later in-place updates do not change it)."""
    if tensor is None:
        return None
    torch = _torch()
    t = tensor.detach()
    shape, dtype, device = tuple(t.shape), _dtype_name(t.dtype), str(t.device)
    if t.is_meta or t.layout != torch.strided:
        return Preview(shape, dtype, device)
    try:
        if t.numel() <= limit:
            if t.dtype in (torch.bfloat16, torch.complex32):   # NumPy has no such dtype
                t = t.to(torch.complex64 if t.is_complex() else torch.float32)
            values = t.cpu().resolve_conj().resolve_neg().numpy()
            return Preview(shape, dtype, device, values=np.array(values, copy=True))
        if t.is_complex() or t.numel() == 0:
            return Preview(shape, dtype, device)
        try:   # the summary on the tensor's own device: only three numbers cross to the host
            x = t.to(torch.float64)
        except (RuntimeError, TypeError):   # devices without float64 (MPS)
            x = t.to(torch.float32)
        return Preview(shape, dtype, device, stats=(float(x.min()), float(x.mean()), float(x.max())),
                       thumb=block_means(x.cpu().numpy()))
    except (RuntimeError, TypeError):   # a tensor subclass with no data to read (fake, functional)
        return Preview(shape, dtype, device)


def _metadata_preview(fn) -> Preview | None:
    """Shape, dtype and device of a single-output node's output, from the node's input metadata."""
    try:
        meta = fn._input_metadata
    except (AttributeError, RuntimeError):
        return None
    if len(meta) != 1:
        return None
    return Preview(tuple(meta[0].shape), _dtype_name(meta[0].dtype), str(meta[0].device))


def _output_shape(fn, nr: int) -> tuple | None:
    """The shape of `fn`'s forward output `nr`: what flows forward along an edge out of fn."""
    try:
        return tuple(fn._input_metadata[nr].shape)
    except (AttributeError, IndexError, RuntimeError):
        variable = getattr(fn, "variable", None)
        return None if variable is None else tuple(variable.shape)


# -- walking torch's graph -----------------------------------------------------------
def _is_accumulate(fn) -> bool:
    return type(fn).__name__ == "AccumulateGrad"


def _node_name(fn) -> str:
    # type(fn).__name__, as torchviz: fn.name() says "torch::autograd::AccumulateGrad"
    return type(fn).__name__


def _flatten(tensors) -> tuple:
    torch = _torch()
    flat = []
    for t in tensors:
        if isinstance(t, (list, tuple)):
            flat.extend(t)
        else:
            flat.append(t)
    for t in flat:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected torch.Tensor arguments, got {type(t).__name__}")
    return tuple(flat)


def _root_node(tensor):
    """The node a backward from `tensor` starts at: its grad_fn, or a leaf's AccumulateGrad."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn
    if not tensor.requires_grad:
        return None
    from torch.autograd.graph import get_gradient_edge
    return get_gradient_edge(tensor).node


def _post_order(root_nodes) -> dict:
    """Node -> position in a depth-first post-order from the roots (inputs before their
    consumers, next_functions in order). Iterative: graphs of 100k nodes are fine."""
    index: dict = {}
    entered = set()
    stack = [(fn, False) for fn in reversed(root_nodes) if fn is not None]
    while stack:
        fn, expanded = stack.pop()
        if expanded:
            if fn not in index:
                index[fn] = len(index)
            continue
        if fn in entered:
            continue
        entered.add(fn)
        stack.append((fn, True))
        stack.extend((nxt, False) for nxt, _ in reversed(fn.next_functions) if nxt is not None and nxt not in entered)
    return index


def _sequence_nr(fn):
    try:
        nr = fn._sequence_nr()
    except (AttributeError, RuntimeError):
        return None
    return None if nr == _NO_SEQUENCE else nr


def _creation_order(root_nodes) -> list:
    """Every node reachable from the roots, inputs first, in the order gradviz numbers its own.

    gradviz numbers nodes as the forward creates them. torch keeps the same count per node:
    `_sequence_nr()`, a per-thread counter its engine also uses to pick the next ready node.
    So ops go by sequence number (within a topological order, which that counter always
    respects on one thread); an AccumulateGrad has no meaningful number and goes right before
    its first consumer, ordered by slot, which is when gradviz creates its own. Where torch
    exposes no sequence numbers the post-order from the roots stands in for them.
    """
    post = _post_order(root_nodes)
    nodes = list(post)
    ops = [fn for fn in nodes if not _is_accumulate(fn)]
    numbers = {fn: _sequence_nr(fn) for fn in ops}
    if any(n is None for n in numbers.values()):
        numbers = {fn: post[fn] for fn in ops}
    consumers: dict = {fn: [] for fn in nodes}
    indegree = dict.fromkeys(nodes, 0)
    for fn in nodes:
        for slot, (nxt, _) in enumerate(fn.next_functions):
            if nxt is not None:
                consumers[nxt].append((fn, slot))
                indegree[fn] += 1
    key = {fn: (numbers[fn], 1, 0, post[fn]) for fn in ops}
    for fn in nodes:
        if fn in key:
            continue
        firsts = [(numbers[c], slot) for c, slot in consumers[fn] if c in numbers]
        first, slot = min(firsts) if firsts else (float("inf"), 0)
        key[fn] = (first, 0, slot, post[fn])
    ready = [(key[fn], post[fn], fn) for fn in nodes if indegree[fn] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        fn = heapq.heappop(ready)[2]
        order.append(fn)
        for consumer, _ in consumers[fn]:
            indegree[consumer] -= 1
            if indegree[consumer] == 0:
                heapq.heappush(ready, (key[consumer], post[consumer], consumer))
    return order


def _saved_tensors(fn, op) -> list:
    """(name, tensor) for each tensor `fn` saved for its backward; [] once a backward freed them."""
    torch = _torch()
    found = []
    try:
        for attr in dir(fn):
            if not attr.startswith("_saved_"):
                continue
            value = getattr(fn, attr)
            name = attr[len("_saved_"):]
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


def _tensor_name(tensor, names: dict) -> str:
    for name, t in names.items():
        if t is tensor:
            return name
    return ""


def _tensor_info(tensor, names: dict) -> TensorRecord:
    return TensorRecord(_tensor_name(tensor, names), _preview(tensor), _preview(_grad_of(tensor)), tuple(tensor.shape))


def _attrs(fn) -> tuple:
    """(name, text) of a torch grad_fn's _saved_* fields, as torchviz's show_attrs lists them."""
    out = []
    for name in dir(fn):
        if not name.startswith("_saved_"):
            continue
        try:
            value = getattr(fn, name)
        except Exception:   # freed after backward: the name is still worth showing
            value = "[freed]"
        out.append((name[len("_saved_"):], _attr_text(value)))
    return tuple(out)


def _variant(fn, op):
    """The record of the form torch ran where one node name has two: add/sub with an alpha other
    than 1, gelu with the tanh approximation (read from the node's _saved_* fields)."""
    if op is None:
        return None
    if op is pointwise.ADD or op is pointwise.SUB:
        if _saved_plain(fn, "alpha") not in (None, 1):
            return pointwise.ADD_ALPHA if op is pointwise.ADD else pointwise.SUB_ALPHA
    if op is pointwise.GELU and getattr(fn, "_saved_approximate", "none") == "tanh":
        return pointwise.GELU_TANH
    return op


def _constants(fn, op, inputs) -> tuple:
    """(key, value) of the numbers a torch node used, read from its _saved_* fields under the
    record's names: params by name (stride, dim, exponent, alpha) and, by input slot, a wrapped
    number (the 2 of x * 2); the keys are the markers of the record's LaTeX."""
    if op is None:
        return ()
    found = []
    for name in op.param_names:
        value = _saved_plain(fn, name)
        if value is None and name in ("min", "max") and hasattr(fn, f"_saved_{name}"):
            value = float("-inf") if name == "min" else float("inf")   # clamp(min=0): no upper bound
        if name == "stride" and value is None and dict(found).get("kernel_size") is not None:
            value = dict(found)["kernel_size"]   # a pool's stride=None is saved as []: the kernel size
        if value is not None:
            found.append((name, value))
    for slot, (arg, info) in enumerate(zip(op.arg_names, inputs)):
        if info.producer is None:
            value = _saved_plain(fn, arg)
            if value is not None:
                found.append((str(slot), value))
    return tuple(found)


def _saved_plain(fn, name):
    """fn._saved_<name> as a plain number, bool or tuple of numbers; None when it is not one."""
    try:
        value = getattr(fn, f"_saved_{name}")
    except Exception:   # absent, or freed after backward
        return None
    if type(value).__name__ == "Tensor":
        return value.item() if value.dim() == 0 and not value.requires_grad else None
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, (bool, int, float)) for v in value):
        return list(value)
    return None


def _attr_text(value) -> str:
    if hasattr(value, "shape") and hasattr(value, "dtype") and getattr(value, "ndim", 0) > 0:
        kind = "saved tensor" if type(value).__name__ == "Tensor" else "array"
        return f"[{kind} {shape_text(value.shape)}]"
    if isinstance(value, tuple) and any(type(v).__name__ == "Tensor" for v in value):
        return "[saved tensors]"
    return str(value)


class _Origin:
    """The torch graph behind some roots as an origin of events: one NodeCreated per node, in
    creation order (node keys are positions in that order), fed to a Recorder."""

    def __init__(self, roots: tuple, params, show_saved: bool, forward):
        self.names = dict(params or {})
        self.roots = roots
        self.root_nodes = [_root_node(t) for t in roots]
        self.order = _creation_order(self.root_nodes)
        self.keys = {fn: i for i, fn in enumerate(self.order)}
        self.leaf_keys = {id(fn.variable): i for fn, i in self.keys.items() if _is_accumulate(fn)}
        self.show_saved = show_saved
        self.scopes = forward.scopes if forward is not None else {}
        self.values = forward.values if forward is not None else {}

    def replay(self, recorder: Recorder) -> None:
        table = _op_table()
        for fn in self.order:
            if _is_accumulate(fn):
                continue
            recorder.feed(NodeCreated(fn, (), (), tuple(self.scopes.get(fn, ())),
                                      self._info(fn, table.get(_node_name(fn)))))

    def _info(self, fn, op) -> NodeRecord:
        op = _variant(fn, op)
        inputs = []
        for nxt, nr in fn.next_functions:
            if nxt is None:
                inputs.append(InputRecord(None, nr, None))
                continue
            leaf = _tensor_info(nxt.variable, self.names) if _is_accumulate(nxt) else None
            inputs.append(InputRecord(self.keys[nxt], nr, _output_shape(nxt, nr), leaf))
        n = len(inputs)
        saved = ()
        if self.show_saved:
            saved = tuple((name, _preview(t)) for name, t in _saved_tensors(fn, op))
        values = dict(key=self.keys[fn], name=_node_name(fn), constants=_constants(fn, op, inputs),
                      attrs=_attrs(fn), value=_op_value(fn, self.values), scope=tuple(self.scopes.get(fn, ())),
                      inputs=tuple(inputs), saved=saved, ctx_saved=self._ctx_saved(fn), n_outputs=_n_outputs(fn))
        if op is None:   # a node gradviz has no record of: its inputs numbered, no formula
            return NodeRecord(symbols=tuple(f"x{_sub(i)}" for i in range(n)), **values)
        return NodeRecord.of_op(op, n, **values)

    def _ctx_saved(self, fn) -> tuple:
        """A custom Function's saved_tensors as (Preview, the AccumulateGrad key of a saved leaf)."""
        if not (hasattr(fn, "saved_tensors") and hasattr(fn, "_raw_saved_tensors")):
            return ()
        try:
            tensors = fn.saved_tensors
        except RuntimeError:   # freed by a backward
            return ()
        return tuple((_preview(t), self.leaf_keys.get(id(t)) if t.is_leaf else None)
                     for t in tensors if t is not None)

    def outputs(self) -> list:
        outs = []
        for t, rn in zip(self.roots, self.root_nodes):
            if rn is None:
                continue
            leaf = _tensor_info(t, self.names) if _is_accumulate(rn) else None
            edge = InputRecord(self.keys[rn], t.output_nr if t.grad_fn is not None else 0, tuple(t.shape), leaf)
            outs.append(Output(_tensor_info(t, self.names), edge))
        return outs


def _sub(k: int) -> str:
    return "".join("₀₁₂₃₄₅₆₇₈₉"[int(d)] for d in str(k))


def _n_outputs(fn) -> int:
    try:
        return len(fn._input_metadata)
    except (AttributeError, RuntimeError):
        return 1


def _op_value(fn, values: dict) -> Preview | None:
    """What a label can say about an op's output: the value record_forward saw, else the
    output the node saved for its own backward (exp, tanh, softmax... keep `result`), else
    its shape, dtype and device alone. Multi-output nodes get none, as in build_trace."""
    meta = _metadata_preview(fn)
    if meta is None:
        return None
    if fn in values:
        return values[fn]
    try:
        result = getattr(fn, "_saved_result", None)
    except RuntimeError:   # freed by a backward without retain_graph
        result = None
    torch = _torch()
    if isinstance(result, torch.Tensor) and tuple(result.shape) == meta.shape:
        return _preview(result)
    return meta


def _grad_of(tensor):
    """`.grad` where torch keeps one (leaves, retain_grad()); reading it elsewhere only warns."""
    if tensor.is_leaf or tensor.retains_grad:
        return tensor.grad
    return None


def trace_from_torch(*tensors, params: dict | None = None, show_saved: bool = False,
                     forward: "ForwardRecord | None" = None, ctx_saved: bool = False) -> Trace:
    """The Trace of the PyTorch graph behind `tensors`: the structure gradviz's build_trace gives.

    params: name -> tensor (torchviz's argument, e.g. dict(model.named_parameters())) names leaves
    and outputs; show_saved adds the tensors each node saved for its backward (kind "saved");
    forward: a `record_forward` record of the forward pass, for module scopes and op values.
    """
    _torch()
    origin = _Origin(_flatten(tensors), params, show_saved, forward)
    recorder = Recorder()
    origin.replay(recorder)
    return recorder.trace(origin.outputs(), show_saved, ctx_saved=ctx_saved)


# -- backward, step by step ------------------------------------------------------------
def _flow_axes(op, slot: int, out_shape, in_shape: tuple) -> tuple:
    """Axes of the node's output gradient summed to give the input's (smaller) shape, by the
    engine's rule, for the input slots the op record declares as broadcasting."""
    if op is None or out_shape is None or (op.broadcasts is not None and slot not in op.broadcasts):
        return ()
    if math.prod(in_shape) >= math.prod(out_shape):
        return ()
    return broadcast_axes(in_shape, out_shape) or ()


def record_torch_backward(*tensors, gradient=None, params: dict | None = None, retain_graph: bool = True,
                          show_saved: bool = False, forward: "ForwardRecord | None" = None) -> Trace:
    """Run torch's backward over `tensors` and return the Trace with one step per executed node.

    Hooks on every node of the graph see what torch's engine does, in the order it does it:
    a node's post hook gets the gradient it received and the gradient it sent along each of
    its next_functions edges (already summed to the input's shape); an AccumulateGrad's pre
    hook sees `.grad` before the write and its post hook after. Each becomes a NodeExecuted
    event for the same Recorder gradviz's own engine feeds. The hooks are removed afterwards
    and every `.grad` is put back as it was: recording changes nothing the user can see, and
    with retain_graph (the default) the graph stays retainable. `gradient` is
    torch.autograd.backward's grad_tensors.
    """
    torch = _torch()
    roots = _flatten(tensors)
    origin = _Origin(roots, params, show_saved, forward)
    recorder = Recorder()
    origin.replay(recorder)
    outputs = origin.outputs()
    table = _op_table()
    keys = origin.keys
    # outputs that retain_grad(): torch writes their .grad when their grad_fn is reached
    retained: dict = {}
    for t in roots:
        if t.grad_fn is not None and t.retains_grad:
            retained.setdefault(t.grad_fn, []).append(t)
    before_write: dict = {}
    written = _written(roots, origin.order, params)
    saved_grads = [(t, t.grad, None if t.grad is None else t.grad.detach().clone()) for t in written]
    versions = [None if t.grad is None else t.grad._version for t in written]

    def before_accumulate(fn):
        def hook(grad_outputs):
            before_write[fn] = _preview(fn.variable.grad)
        return hook

    def after_node(fn):
        op, key = table.get(_node_name(fn)), keys[fn]

        def hook(grad_inputs, grad_outputs):
            out_shape = tuple(grad_outputs[0].shape) if len(grad_outputs) == 1 and grad_outputs[0] is not None else None
            sent = tuple((slot, _preview(g), _flow_axes(op, slot, out_shape, tuple(g.shape)))
                         for slot, g in enumerate(grad_inputs) if g is not None)
            accumulations = []
            if _is_accumulate(fn) and grad_outputs[0] is not None:
                accumulations.append(Accumulation(contribution=_preview(grad_outputs[0]),
                                                  total=_preview(fn.variable.grad), before=before_write.pop(fn, None),
                                                  target=("leaf", key)))
            for t in retained.get(fn, ()):
                g = grad_outputs[t.output_nr]
                if g is not None:
                    total = _preview(t.grad)
                    before = recorded_totals.get(id(t), _preview(_grad_of_before(t, saved_grads)))
                    accumulations.append(Accumulation(contribution=_preview(g), total=total, before=before,
                                                      target=("output", key, t.output_nr)))
                    recorded_totals[id(t)] = total
            recorder.feed(NodeExecuted(fn, StepRecord(grad_in=tuple(_preview(g) for g in grad_outputs),
                                                      accumulations=tuple(accumulations), key=key, sent=sent)))
        return hook

    recorded_totals: dict = {}
    handles = []
    recorder.implicit_seed = gradient is None or (isinstance(gradient, (list, tuple))
                                                  and all(g is None for g in gradient))
    try:
        for fn in origin.order:
            if _is_accumulate(fn):
                handles.append(fn.register_prehook(before_accumulate(fn)))
            handles.append(fn.register_hook(after_node(fn)))
        torch.autograd.backward(roots, grad_tensors=gradient, retain_graph=retain_graph)
    finally:
        for handle in handles:
            handle.remove()
        with torch.no_grad():
            for (t, grad, value), version in zip(saved_grads, versions):
                if grad is not None:
                    grad.copy_(value)
                    _set_version(grad, version)
                t.grad = grad
    return recorder.trace(outputs, show_saved)


def _set_version(tensor, version: int) -> None:
    """Put a restored .grad's version counter back (torch's accumulation and the copy bumped it;
    its values are the old ones again). Where torch lacks the setter, the version stays bumped."""
    setter = getattr(_torch()._C._autograd, "_unsafe_set_version_counter", None)
    if setter is None:
        return
    try:
        setter((tensor,), (version,))
    except TypeError:   # older torch: one tensor and one int
        setter(tensor, version)


def _grad_of_before(t, saved_grads) -> "object":
    for tensor, _, value in saved_grads:
        if tensor is t:
            return value
    return None


def _written(roots, order, params: dict | None = None) -> list:
    """Every tensor a backward from `roots` may write .grad into that the bridge can see: the
    leaves, and the roots and named tensors (`params`) that retain_grad(). A retained non-leaf
    it is not given cannot be found from torch's graph, so its .grad is not put back."""
    found = {id(fn.variable): fn.variable for fn in order if _is_accumulate(fn)}
    for t in (*roots, *(params or {}).values()):
        if getattr(t, "is_leaf", False) or getattr(t, "retains_grad", False):
            found[id(t)] = t
    return list(found.values())


# -- forward: module scopes and op values -------------------------------------------------
class ForwardRecord:
    """What `record_forward` saw: the scope path and the output value of each node created.

    It holds the nodes it saw (torch nodes take no weak references), so it keeps their
    graph alive until it is dropped.
    """

    def __init__(self):
        self.scopes: dict = {}   # torch node -> scope path, e.g. ("MLP", "fc1 (Linear)")
        self.values: dict = {}   # torch node -> Preview of its output when it was computed
        self._path: list = []
        self._seen: set = set()
        self._first = None       # sequence number of the first node made while recording

    @contextmanager
    def scope(self, name: str):
        """Nodes created inside get `name` appended to their scope path (gradviz.scope for torch)."""
        self._path.append(str(name))
        try:
            yield
        finally:
            self._path.pop()

    def _claim(self, result) -> None:
        """Give each node made since the last call the current scope; record op outputs' values."""
        torch = _torch()
        tensors = result if isinstance(result, (tuple, list)) else (result,)
        for t in tensors:
            if not isinstance(t, torch.Tensor) or t.grad_fn is None:
                continue
            fn = t.grad_fn
            if fn not in self._seen and _metadata_preview(fn) is not None:
                self.values[fn] = _preview(t)
            # a composite call (cross_entropy, a module) made nodes nobody returned: walk back
            # to the nodes already seen, or made before recording began, and claim the rest
            stack = [fn]
            while stack:
                node = stack.pop()
                if node is None or node in self._seen or _is_accumulate(node):
                    continue
                nr = _sequence_nr(node)
                if self._first is not None and nr is not None and nr < self._first:
                    continue
                self._seen.add(node)
                self.scopes[node] = tuple(self._path)
                stack.extend(nxt for nxt, _ in node.next_functions)


def _scope_names(module) -> dict:
    """Module -> its scope segment, as gradviz.nn names them: the root by its class, a
    child as "attribute (Class)"."""
    segments: dict = {}
    for qualname, m in module.named_modules():
        if m in segments:
            continue
        attr = qualname.rsplit(".", 1)[-1]
        segments[m] = f"{attr} ({type(m).__name__})" if qualname else type(m).__name__
    return segments


@contextmanager
def record_forward(module=None):
    """Watch a torch forward pass; pass the record to trace_from_torch / record_torch_backward.

        with record_forward(model) as rec:
            loss = F.cross_entropy(model(x), y)
        trace = trace_from_torch(loss, params=dict(model.named_parameters()), forward=rec)

    A TorchFunctionMode sees every torch call made in the block and records its output's
    value; with `module`, forward hooks on it and its submodules put each node made inside a
    module's forward into that module's scope, so diagrams cluster them by module name.
    """
    torch = _torch()
    from torch.overrides import TorchFunctionMode

    record = ForwardRecord()
    with torch.enable_grad():
        # a throwaway node tells where torch's node counter stands: older nodes are not ours
        probe = torch.zeros((), requires_grad=True) * 1
    record._first = _sequence_nr(probe.grad_fn)
    del probe

    class _Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            record._claim(result)
            return result

    handles = []
    if module is not None:
        for m, segment in _scope_names(module).items():
            def enter(mod, args, segment=segment):
                record._path.append(segment)

            def leave(mod, args, output):
                record._claim(output)   # whatever the module made that no torch call returned
                record._path.pop()
            handles.append(m.register_forward_pre_hook(enter))
            handles.append(m.register_forward_hook(leave, always_call=True))
    try:
        with _Watch():
            yield record
    finally:
        for handle in handles:
            handle.remove()


# -- a Recording of torch's backward ------------------------------------------------------
class WholeRunRecording(Recording):
    """torch's backward as a Recording: the graph's Trace first, then its steps one at a time.

    torch's engine is not paused between nodes here: the first step runs the whole backward
    through `record_torch_backward` (which puts every .grad back as it was) and the steps it
    recorded are handed out one by one, in the order torch ran them. So .grad is never written
    (write_grads does not apply) and jacobians are not recorded; `reset()` hands the same steps
    out again.
    """

    def __init__(self, roots: tuple, gradient=None, params: dict | None = None, retain_graph: bool = True,
                 show_saved: bool = False):
        super().__init__(trace_from_torch(*roots, params=params, show_saved=show_saved), finished=False)
        self._run = dict(tensors=roots, gradient=gradient, params=params, retain_graph=retain_graph,
                         show_saved=show_saved)
        self._recorded: list | None = None   # the steps torch ran, once it has run

    def upcoming(self) -> str | None:
        if self._recorded is None or self.finished:
            return None
        return self._recorded[len(self.trace.steps)].node

    def _next(self) -> None:
        if self._recorded is None:
            run = dict(self._run)
            full = record_torch_backward(*run.pop("tensors"), **run)
            self._recorded = full.steps
            self.trace.implicit_seed = full.implicit_seed
        if len(self.trace.steps) < len(self._recorded):
            step = self._recorded[len(self.trace.steps)]
            for acc in step.accumulations:
                self.trace.node(acc.node).grad = acc.total
            self.trace.steps.append(step)
        self.finished = len(self.trace.steps) == len(self._recorded)

    def _restart(self) -> None:
        if self._run is None:
            raise RuntimeError("this recording was closed: record the tensors again to run their backward")
        self.finished = False

    def close(self) -> None:
        self.finished = True
        self._run = None


def record_torch(roots, gradient=None, names: dict | None = None, model=None, caller: dict | None = None,
                 retain_graph: bool = True, jacobians: bool = False, show_saved: bool = False,
                 write_grads: bool = False) -> Recording:
    """The Recording of torch's backward over `roots` (see WholeRunRecording). names: {name: tensor};
    model: an nn.Module whose parameters are named as named_parameters() names them; caller: the
    calling code's variables (unused here)."""
    roots = _flatten(roots)
    params = dict(names or {})
    if model is not None:
        params.update((k, v) for k, v in model.named_parameters() if k not in params)
    return WholeRunRecording(roots, gradient, params, retain_graph, show_saved)
