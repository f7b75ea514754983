"""The torch graph behind some roots as an origin of gradviz's events: one NodeCreated per node,
in creation order, fed to the same Recorder gradviz's own graphs go through, and the Trace of
it (`trace_from_torch`). Walks `grad_fn`, `next_functions`, `AccumulateGrad.variable` and the
saved attributes as torchviz does."""
from __future__ import annotations

from functools import cached_property, lru_cache

from ..autograd.graph import ACCUMULATE_GRAD
from ..events import NodeCreated
from ..nn import functional as nn_functional
from ..ops import registry
from ..ops.op import Op
from ..previews import CONSTANT_VALUES, Preview
from ..records import InputRecord, NodeRecord, PendingNodeRecord, TensorRecord
from ..tracing import Output, Recorder, Trace
from . import attrs as saved
from .fused import fused_record
from .frozen import freeze
from .graph import creation_order, metadata_preview, n_outputs, output_shape, post_order, root_node
from .lines import leaf_line, line_of
from .names import Naming, inferred_scopes
from .previews import Previews, preview
from .support import flatten, grad_of, is_accumulate, node_name, torch_module


@lru_cache(maxsize=None)
def op_table() -> dict:
    """gradviz's op records by PyTorch node name (the ops registry, then the records of
    gradviz.nn.functional), so a torch node gets gradviz's formulas and symbols."""
    table = {"AccumulateGrad": ACCUMULATE_GRAD, **registry.by_torch_name()}
    for value in vars(nn_functional).values():
        if isinstance(value, Op) and value.vjp is not None:
            table.setdefault(value.torch_name, value)
    return table


class Origin:
    """The torch graph behind some roots: its nodes in creation order (node keys are positions
    in that order), replayed into a Recorder as NodeCreated events.

    A recording freezes the origin (`freeze`) before torch's backward runs: what the graph will not
    keep is taken then (the tensors nodes saved, the leaves' values and .grad, the caller's names
    for outputs), so the NodeRecords can be made later, when a view first reads the Trace."""

    def __init__(self, roots: tuple, naming: Naming, show_saved: bool, forward):
        self.naming = naming
        self.roots = roots
        self.root_nodes = [root_node(t) for t in roots]
        self.root_edges = [(rn, t.output_nr if t.grad_fn is not None else 0, tuple(t.shape))
                           for t, rn in zip(roots, self.root_nodes)]
        self.post = post_order(self.root_nodes)   # every node, inputs before their consumers
        self.show_saved = show_saved
        self._infos: dict = {}   # id(tensor) -> its TensorRecord (the tensors are held by the graph)
        self.previews = Previews()   # a view reads a value when it shows it
        self.frozen: dict = {}       # node -> its Frozen self (freeze)
        self.forward = forward
        self.values = {} if forward is None else forward.values
        self.output_names = None     # (node, output_nr) -> the caller's name for that output (taken by freeze)
        self.kept = False            # freeze() took what the graph may not keep: a node's numbers can wait

    @cached_property
    def order(self) -> list:
        return creation_order(self.root_nodes, self.post)

    @cached_property
    def keys(self) -> dict:
        return {fn: i for i, fn in enumerate(self.order)}

    @cached_property
    def leaf_keys(self) -> dict:
        return {id(fn.variable): i for fn, i in self.keys.items() if is_accumulate(fn)}

    @cached_property
    def scopes(self) -> dict:
        """The modules record_forward saw, else those the parameters' names tell."""
        scopes = inferred_scopes(self.order, self.naming.param_scopes, self.naming.sequences, self.naming.children)
        if self.forward is not None:
            scopes.update(self.forward.scopes)
        return scopes

    def freeze(self) -> None:
        """Take now what the graph may not keep until the Trace is made: each node's saved tensors
        (a backward without retain_graph frees them) with the previews a view will read of them, the
        leaves' and roots' values and .grad (the backward writes .grad), and which node made each
        tensor the caller named (an in-place op moves a tensor's grad_fn)."""
        self.output_names = self._output_names()
        self.kept = True
        for t in self.roots:
            self.tensor_info(t)
        for fn in self.post:
            if is_accumulate(fn):
                self.tensor_info(fn.variable)
                continue
            node = freeze(fn)
            if node is not fn:
                self.frozen[fn] = node
                self._preview_held(fn, node)

    def _preview_held(self, fn, node) -> None:
        """The previews of a node's held tensors that its record will show, taken with the values'
        versions and samples of now: its saved result (its value), the inputs that need no gradient
        (in_values), a custom Function's saved tensors, and with show_saved every saved tensor."""
        data = any(nxt is None for nxt, _ in fn.next_functions)
        for name, held in node.held.items():
            if isinstance(held, Exception):
                continue
            value = held[0]
            if name == "saved_tensors" or self.show_saved:
                for t in (value if isinstance(value, (tuple, list)) else (value,)):
                    if isinstance(t, torch_module().Tensor):
                        self.previews.of(t, sample=True)
            elif name == "result" and fn not in self.values or data and _small_constant(value):
                self.previews.of(value, sample=True)

    def _output_names(self) -> dict:
        found = {}
        for name, t in self.naming.tensors.items():   # the caller's names for intermediate tensors
            fn = getattr(t, "grad_fn", None)
            if fn is not None and fn in self.post:
                found.setdefault((fn, t.output_nr), name)
        return found

    def replay(self, recorder: Recorder) -> None:
        table = op_table()
        names = self._output_names() if self.output_names is None else self.output_names
        for (fn, nr), name in names.items():
            recorder.tensor_names.setdefault(self.keys[fn], {}).setdefault(nr, name)
        for fn in self.order:
            if is_accumulate(fn):
                continue
            recorder.feed(NodeCreated(fn, (), (), tuple(self.scopes.get(fn, ())),
                                      self._info(fn, table.get(node_name(fn)))))

    def _info(self, live, op) -> NodeRecord:
        fn = self.frozen.get(live, live)   # its saved tensors as they were when the origin was frozen
        op = saved.variant(fn, op)
        inputs = []
        for nxt, nr in live.next_functions:   # (the node's own fields are read from it, not through fn)
            if nxt is None:
                inputs.append(InputRecord(None, nr, None))
                continue
            leaf = self.tensor_info(nxt.variable) if is_accumulate(nxt) else None
            inputs.append(InputRecord(self.keys[nxt], nr, output_shape(nxt, nr), leaf))
        n = len(inputs)
        kept = ()
        if self.show_saved:
            kept = tuple((name, self.previews.of(t, sample=True)) for name, t in saved.saved_tensors(fn, op))
        read = saved.SavedValues(fn)
        in_values = self._constant_inputs(op, inputs, read)
        values = dict(key=self.keys[live], name=node_name(fn), in_values=in_values,
                      value=_op_value(fn, metadata_preview(live), self.values.get(live), self.previews),
                      scope=tuple(self.scopes.get(live, ())), inputs=tuple(inputs), saved=kept,
                      ctx_saved=self._ctx_saved(live, fn), n_outputs=n_outputs(live), source=line_of(live))
        if op is None:   # a node gradviz has no record of: a fused node explained, else numbered inputs
            values.update(constants=(), attrs=saved.attrs(fn, read))
            fused = fused_record(fn, **values)
            return fused or NodeRecord(symbols=tuple(f"x{_sub(i)}" for i in range(n)), **values)
        if fn is not live:   # what an in-place write can change read now; what none can, when first shown
            read.keep(name for name in fn.held if name != "saved_tensors")
        # a loss's formulas read as its reduction says, and the inputs given as numbers are named
        # apart: read now; the node's other numbers and its attribute texts when first shown
        reduction = saved.saved_plain(fn, "reduction", read) if "reduction" in op.param_names else None
        by_slot = tuple((k, v) for k, v in saved.input_constants(fn, op, inputs, read)
                        if not (int(k) < len(in_values) and in_values[int(k)] is not None))
        complete, values = _pending(fn, op, read, by_slot), {**_shown(op, n, reduction), **values}
        if not self.kept:   # not frozen (trace_from_torch): what the graph holds now may be gone later
            return NodeRecord(**{**values, **complete()})
        return PendingNodeRecord(complete, frozenset(int(k) for k, _ in by_slot), **values)

    def _constant_inputs(self, op, inputs: list, read) -> tuple:
        """Per input slot, the tensor the node saved (`read`: its SavedValues) that needs no gradient
        (the y of x * y), as gradviz's own recording keeps it (its values when small, else its shape),
        naming its InputRecord by the caller's name; () when there is none. An unnamed 0-d one stays a
        number: torch saves the 2 of x * 2 as such a tensor too."""
        torch = torch_module()
        found = []
        for arg, info in zip(op.arg_names if op is not None else (), inputs):
            t = read.get(arg) if info.producer is None else None   # an exception: absent, or freed after backward
            name = self.naming.name_of(t) if isinstance(t, torch.Tensor) else ""
            if not isinstance(t, torch.Tensor) or t.requires_grad or not t.numel() or (t.dim() == 0 and not name):
                found.append(None)
                continue
            info.name = name
            info.tensor = t._cdata   # the TensorImpl the node saved: the same for every node that saved it
            found.append(self.previews.of(t, sample=True) if t.numel() <= CONSTANT_VALUES else
                         Preview(tuple(t.shape), str(t.dtype).replace("torch.", ""), str(t.device)))
        return tuple(found) if any(v is not None for v in found) else ()

    def tensor_info(self, tensor) -> TensorRecord:
        """A leaf's or an output's record, taken once (a leaf read by several nodes is one tensor)."""
        info = self._infos.get(id(tensor))
        if info is None:
            info = TensorRecord(self.naming.name_of(tensor), self.previews.of(tensor, sample=True),
                                preview(grad_of(tensor)),
                                tuple(tensor.shape), leaf_line(tensor) if tensor.is_leaf else None)
            self._infos[id(tensor)] = info
        return info

    def _ctx_saved(self, live, fn) -> tuple:
        """A custom Function's saved_tensors as (Preview, the AccumulateGrad key of a saved leaf)."""
        if not hasattr(type(live), "_raw_saved_tensors"):   # (asked of the node's type: cheaper, and as torch's)
            return ()
        try:
            tensors = fn.saved_tensors
        except RuntimeError:   # freed by a backward
            return ()
        return tuple((self.previews.of(t, sample=True), self.leaf_keys.get(id(t)) if t.is_leaf else None)
                     for t in tensors if t is not None)

    def outputs(self) -> list:
        outs = []
        for t, (rn, output_nr, shape) in zip(self.roots, self.root_edges):
            if rn is None:
                continue
            leaf = self.tensor_info(t) if is_accumulate(rn) else None
            outs.append(Output(self.tensor_info(t), InputRecord(self.keys[rn], output_nr, shape, leaf)))
        return outs


@lru_cache(maxsize=None)
def _shown(op, n: int, reduction) -> dict:
    """The fields `NodeRecord.of_op` gives every node of `op` with n inputs (its formulas and symbols),
    made once per op record, number of inputs and reduction rather than for every node."""
    return vars(NodeRecord.of_op(op, n, constants=(("reduction", reduction),)))


def _pending(fn, op, read, by_slot: tuple):
    """How a node's constants and attribute texts are made when a view first reads them, from its
    saved values as kept at record time (`read`, of the frozen node): the numbers it used under the
    record's names, then those given for its inputs (`by_slot`), and torchviz's attributes."""
    def complete() -> dict:
        return {"constants": saved.param_constants(fn, op, read) + by_slot, "attrs": saved.attrs(fn, read)}
    return complete


def _sub(k: int) -> str:
    return "".join("₀₁₂₃₄₅₆₇₈₉"[int(d)] for d in str(k))


def _small_constant(value) -> bool:
    """A saved tensor an in_values cell shows the values of (see Origin._constant_inputs)."""
    return (isinstance(value, torch_module().Tensor) and not value.requires_grad
            and 0 < value.numel() <= CONSTANT_VALUES)


def _op_value(fn, meta: Preview | None, seen: Preview | None, previews: Previews) -> Preview | None:
    """What a label can say about an op's output: the value record_forward saw (`seen`), else the
    output the node saved for its own backward (exp, tanh, softmax... keep `result`), else its
    shape, dtype and device alone (`meta`, the node's metadata_preview). Multi-output nodes get
    none, as in build_trace."""
    if meta is None:
        return None
    if seen is not None:
        return seen
    if "result" not in saved.saved_names(type(fn)):   # most nodes (a missing attribute costs an exception)
        return meta
    try:
        result = fn._saved_result
    except RuntimeError:   # freed by a backward without retain_graph
        result = None
    if isinstance(result, torch_module().Tensor) and tuple(result.shape) == meta.shape:
        return previews.of(result, sample=True)
    return meta


def trace_from_torch(*tensors, params: dict | None = None, show_saved: bool = False, forward=None,
                     ctx_saved: bool = False, model=None, caller: dict | None = None) -> Trace:
    """The Trace of the PyTorch graph behind `tensors`: the structure gradviz's build_trace gives.

    params: name -> tensor (torchviz's argument, e.g. dict(model.named_parameters())) names leaves
    and outputs; model: an nn.Module whose parameters name the leaves and whose submodules cluster
    the nodes that read them; caller: a namespace (a frame's variables) whose tensors and modules
    name the same way; show_saved adds the tensors each node saved for its backward (kind
    "saved"); forward: a `record_forward` record of the forward pass, for module scopes and values.
    """
    torch_module()
    origin = Origin(flatten(tensors), Naming.of(params, model, caller), show_saved, forward)
    recorder = Recorder()
    origin.replay(recorder)
    return recorder.trace(origin.outputs(), show_saved, ctx_saved=ctx_saved)
