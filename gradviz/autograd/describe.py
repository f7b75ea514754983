"""The live graph as plain values: what NodeCreated carries and what `draw()` replays.

`describe_node` turns a grad_fn into a records.NodeRecord (previews, the symbols of this
node's inputs, the constants it used, where each input's gradient goes), so a
Recorder builds its Trace without touching an engine object.
"""
from __future__ import annotations

from .. import backend
from ..formatting import shape
from ..code_lines import leaf_source_of, source_of
from ..previews import Preview
from ..records import InputRecord, NodeRecord, TensorRecord
from .graph import AccumulateGrad, Node


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
        inputs.append(info)
    inputs = tuple(inputs)
    return NodeRecord.of_op(
        op, n, key=node.id, constants=constants(node, inputs), attrs=attrs(node),
        value=value(node), scope=tuple(node.scope), inputs=inputs,
        saved=saved(node) if with_saved else (), ctx_saved=ctx_saved(node) if with_saved else (),
        source=source)
