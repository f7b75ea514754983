"""The live graph as plain values: what NodeCreated carries, what `draw()` replays, and each
step of a recorded backward.

`describe_node` turns a grad_fn into a records.NodeRecord (previews, the symbols of this
node's inputs, the constants it used, where each input's gradient goes), and `step_info` the
engine's Step into a records.StepRecord (what it received, sent and wrote, its local Jacobians
when asked), so a Recorder builds its Trace without touching an engine object.
"""
from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..formatting import shape
from ..code_lines import leaf_source_of, source_of
from ..previews import CONSTANT_VALUES, Preview
from ..records import Accumulation, Hook, InputRecord, NodeRecord, StepRecord, TensorRecord
from ..tensor import Tensor
from .engine import node_vjp
from .nodes import AccumulateGrad, Node


def tensor_info(tensor, name: str | None = None) -> TensorRecord:
    """A leaf or output tensor: its name (the given one, else .name), value and .grad."""
    grad = tensor._grad
    if name is None:
        name = "" if tensor.name is None else str(tensor.name)   # x.name = 42 is shown as text
    return TensorRecord(str(name), Preview.of(tensor._data),
                      None if grad is None else Preview.of(grad._data), tuple(tensor._data.shape),
                      leaf_source_of(tensor))


def edge_info(nxt, nr: int, shape, names: dict | None) -> InputRecord:
    """Where a gradient goes: an op node, or a leaf's AccumulateGrad (which carries the leaf)."""
    if nxt is None:
        return InputRecord(None, nr, shape)
    leaf = None
    if type(nxt) is AccumulateGrad:
        var = nxt.variable
        leaf = tensor_info(var, (names or {}).get(id(var)))
    return InputRecord(nxt.id, nr, shape, leaf)


def _is_constant(value) -> bool:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value is not None
    if isinstance(value, tuple):
        return all(isinstance(v, (bool, int, float)) for v in value)
    return False


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def constants(node: Node, inputs: tuple) -> tuple:
    """(key, plain value) of the numbers this node used: its shown params by name (dim, keepdim,
    alpha, the 3 of pow(3)) and, by input slot ("0", "1", ...), its one-element inputs that are
    constants (the 2 of x * 2); the keys are the markers of the record's LaTeX."""
    return op_constants(node.op, node.params, node.inputs, inputs, released(node))


def op_constants(op, params: tuple, tensors: tuple, inputs: tuple, released: bool = False) -> tuple:
    """The constants of one call of `op` (see `constants`): `tensors` are its input Tensors (none:
    params only) and `inputs` their InputRecords, whose `producer` None marks a constant slot; once
    `released` the inputs are ghosts, and only their 0-d values are still known."""
    found = []
    shown = op.shown if op.shown is not None else op.param_names
    for name, value in zip(op.param_names, params):
        if getattr(value, "shape", None) == () and getattr(value, "dtype", None) is not None and \
                value.dtype.kind in "fiub":
            value = value.item()            # a Python number kept as a 0-d array (the 3 of 3 - x)
        elif value is None and name in ("min", "max"):
            value = float("-inf") if name == "min" else float("inf")   # clamp(min=0): no upper bound
        if name in shown and _is_constant(value):
            found.append((name, _plain(value)))
    for slot, info in enumerate(inputs):
        if info.producer is None and slot < len(tensors):
            data = tensors[slot]._data
            if getattr(data, "size", None) == 0:
                found.append((str(slot), None))   # the empty stand-in for a missing input (no bias): no term
                continue
            if released and getattr(data, "ndim", 1):
                continue   # a ghost now; a 0-d constant (the 2 of x * 2) is kept as it was, as torch keeps a scalar
            if getattr(tensors[slot], "_wrapped", False) and data.dtype.kind in "fiub":
                found.append((str(slot), data.reshape(()).item()))   # a Python number: drawn as the number
    return tuple(found)


def input_values(tensors: tuple, inputs: tuple, constant_slots: set, released: bool = False) -> tuple:
    """Per input slot, the tensor that needs no gradient and is no Python number (a target, a mask,
    the y of x * y): a Preview of its values (shape and dtype only when it is large, or a ghost once
    `released`), None elsewhere; () when there is none."""
    found = []
    for slot, info in enumerate(inputs):
        data = getattr(tensors[slot], "_data", None) if slot < len(tensors) else None
        if info.producer is not None or str(slot) in constant_slots or getattr(data, "size", 0) == 0:
            found.append(None)
        elif data.size <= CONSTANT_VALUES and not (released and data.ndim):
            found.append(Preview.of(data))
        else:   # the shape and dtype only: a dataset's values would cost a pass over it for nothing shown
            found.append(Preview(tuple(int(d) for d in data.shape), str(data.dtype), str(backend.device_of(data))))
    return tuple(found) if any(v is not None for v in found) else ()


def released(node: Node) -> bool:
    """True once a backward without retain_graph let go of the node's values (it keeps ghosts)."""
    return node.out_data is None and getattr(node, "out_meta", None) is not None


def value(node: Node) -> Preview | None:
    """The node's output: its values, or only shape, dtype and device once released."""
    if node.op.n_outputs != 1:
        return None
    if node.out_data is not None:
        return Preview.of(node.out_data)
    meta = getattr(node, "out_meta", None)
    if meta is None:
        return None
    return Preview(tuple(meta.shape), str(meta.dtype), str(backend.device_of(meta)))


def attrs(node: Node) -> tuple:
    """(name, text) of a grad_fn's arguments and saved tensors, as torchviz's show_attrs lists them."""
    op = node.op
    out = []
    for name, value in zip(op.param_names, node.params):
        if hasattr(value, "shape") and hasattr(value, "dtype") and getattr(value, "ndim", 0) > 0:
            out.append((name, f"[array {shape(value.shape)}]"))
        else:
            out.append((name, str(value)))
    out.extend((name, "[saved tensor]") for name in op.saves)
    return tuple(out)


def saved(node: Node) -> tuple:
    """(name, Preview) of what the node saved for backward; () once a backward freed it."""
    op = node.op
    if node.freed or released(node):
        return ()
    out = []
    for slot, arg in enumerate(op.arg_names):
        if arg in op.saves and slot < len(node.inputs):
            out.append((arg, Preview.of(node.inputs[slot]._data)))
    if "result" in op.saves and node.out_data is not None:
        out.append(("result", Preview.of(node.out_data) if op.n_outputs == 1 else None))
    return tuple(out)


def ctx_saved(node: Node) -> tuple:
    """A custom Function's ctx.saved_tensors as (Preview, the AccumulateGrad key of a saved leaf);
    () for built-in nodes, or once a backward freed them."""
    if getattr(node, "_forward_cls", None) is None:
        return ()
    try:
        tensors = node.saved_tensors
    except RuntimeError:
        return ()
    out = []
    for t in tensors:
        if t is None:
            continue
        accum = t._accum if t.grad_fn is None and t.requires_grad else None
        out.append((Preview.of(t._data), accum.id if accum is not None else None))
    return tuple(out)


def describe_node(node: Node, names: dict | None = None, source=None, with_saved: bool = True) -> NodeRecord:
    """The NodeRecord of an op node (not an AccumulateGrad: leaves travel with their consumers)."""
    op = node.op
    n = len(node.next_functions)
    if source is None:
        source = source_of(node)
    inputs = []
    for slot, (nxt, nr) in enumerate(node.next_functions):
        try:
            dims = tuple(node.input_shape(slot))
        except (AttributeError, IndexError, TypeError):
            dims = None
        info = edge_info(nxt, nr, dims, names)
        if nxt is None and names and slot < len(node.inputs) and (not released(node) or not node.inputs[slot]._data.ndim):
            # a target, a mask: no edge, but a name (a released node still holds its 0-d inputs themselves)
            info.name = str(names.get(id(node.inputs[slot]), ""))
        if nxt is None and slot < len(node.inputs) and (not released(node) or not node.inputs[slot]._data.ndim):
            info.tensor = id(node.inputs[slot])   # the node holds it: no other live tensor has its id
        inputs.append(info)
    inputs = tuple(inputs)
    found = constants(node, inputs)
    return NodeRecord.of_op(
        op, n, key=node.id, constants=found, attrs=attrs(node),
        in_values=input_values(node.inputs, inputs, {k for k, _ in found if k.isdigit()}, released(node)),
        value=value(node), scope=tuple(node.scope), inputs=inputs,
        saved=saved(node) if with_saved else (), ctx_saved=ctx_saved(node) if with_saved else (),
        source=source)


# -- a step of the backward ------------------------------------------------------------------
def local_jacobians(node: Node, limit: int = 64) -> list:
    """J of a grad_fn with respect to each of its inputs: one (m, nᵢ) array per next_functions
    slot, or None where nothing flows, the graph was freed or a side exceeds `limit` elements.

    Row k is the node's VJP applied to the one-hot vector e_k over its (flattened) outputs:
    reverse mode never builds J, but one-hot seeds read it row by row."""
    n_slots = len(node.next_functions)
    if type(node) is AccumulateGrad or node.freed or node.out_data is None or node.op.vjp is None:
        return [None] * n_slots
    multi = node.op.n_outputs > 1
    outs = tuple(node.out_data) if multi else (node.out_data,)
    if any(o is None or getattr(o, "dtype", None) is None or o.dtype.kind not in "fc" for o in outs):
        return [None] * n_slots
    sizes = [int(math.prod(o.shape)) for o in outs]
    m = sum(sizes)
    if m == 0 or m > limit:
        return [None] * n_slots
    in_sizes = [int(math.prod(node.input_shape(i))) if nxt is not None else 0
                for i, (nxt, _) in enumerate(node.next_functions)]
    wanted = [nxt is not None and 0 < n <= limit for (nxt, _), n in zip(node.next_functions, in_sizes)]
    if not any(wanted):
        return [None] * n_slots
    rows: list = [[] for _ in range(n_slots)]
    try:
        for k in range(m):
            g = _one_hot(outs, sizes, k)
            sent, _ = node_vjp(node, g if multi else g[0])
            for i in range(n_slots):
                if wanted[i]:
                    gi = sent[i]
                    # + 0.0: a one-hot row times a negative value gives −0.0, which would print as "-0.0"
                    rows[i].append(np.zeros(in_sizes[i]) if gi is None
                                   else backend.to_numpy(gi).astype(np.float64).ravel() + 0.0)
    except Exception:   # an op whose VJP cannot take a one-hot seed: no Jacobian to show
        return [None] * n_slots
    return [np.stack(r) if wanted[i] else None for i, r in enumerate(rows)]


def _one_hot(outs: tuple, sizes: list, k: int) -> tuple:
    """e_k over the concatenation of every output, in each output's own shape and array type."""
    parts = []
    offset = 0
    for out, size in zip(outs, sizes):
        flat = backend.namespace_of(out).zeros(size, dtype=out.dtype)
        if offset <= k < offset + size:
            flat[k - offset] = 1
        parts.append(flat.reshape(out.shape))
        offset += size
    return tuple(parts)


def _leaf_key(tensor, node: Node) -> tuple:
    """Which tensor a .grad write went to, in plain values: a leaf by its AccumulateGrad, a
    retained non-leaf by its grad_fn and output number."""
    if type(node) is AccumulateGrad:
        return ("leaf", node.id)
    return ("output", node.id, tensor.output_nr)


def _grad_preview(g):
    # a node pre-hook's result is a tuple of gradients: the step panel shows tensor hooks' values only
    return None if g is None or isinstance(g, (tuple, list)) else Preview.of(g)


def step_info(step, jacobians: bool = False) -> StepRecord:
    """The engine's Step in plain values (Previews taken now, as the step ran): a step of a Trace.
    With `jacobians`, the node's local Jacobians too (small nodes, a backward on arrays only)."""
    preview = Preview.of
    sent = []
    for slot, g in enumerate(step.grad_inputs):
        if g is not None:
            axes = step.reduced_axes[slot] if slot < len(step.reduced_axes) else ()
            sent.append((slot, preview(g), tuple(axes)))
    accs = tuple(Accumulation(contribution=preview(contribution), total=preview(total), before=preview(before),
                              target=_leaf_key(tensor, step.node))
                 for (tensor, contribution, total), before in zip(step.accumulated, step.written_before or ()))
    hooks = tuple(Hook(getattr(h, "__name__", "hook"), nr, _grad_preview(before), _grad_preview(after))
                  for nr, h, before, after in step.hooks)
    if jacobians and not any(isinstance(g, Tensor) for g in step.grad_outputs):   # not a create_graph run
        jacobians = tuple(local_jacobians(step.node))
    else:
        jacobians = None
    return StepRecord(grad_in=tuple(preview(g) for g in step.grad_outputs), accumulations=accs, hooks=hooks,
                      jacobians=jacobians, key=step.node.id, sent=tuple(sent))
