"""A live gradviz graph replayed into a Recorder, as if it had listened while the graph was made.

`replay` feeds one NodeCreated per grad_fn behind the roots, oldest first, so a graph made before
anyone listened is drawn by the same code; `build_trace` is the Trace of such a graph.
"""
from __future__ import annotations

from .. import events
from ..bulk import bulk
from ..autograd.describe import describe_node, edge_info, tensor_info
from ..autograd.graph import AccumulateGrad, Node
from ..progress import progress
from ..previews import Preview
from ..records import InputRecord
from .recorder import Output, Recorder
from .trace import Trace


def collect(root_nodes) -> list:
    """Every grad_fn reachable from the roots, oldest first (iterative: deep graphs are fine)."""
    seen, stack = set(), list(root_nodes)
    found = []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        found.append(node)
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return sorted(found, key=lambda n: n.id)


def _names_by_id(names: dict | None) -> dict:
    by_id: dict = {}
    for name, t in (names or {}).items():
        by_id.setdefault(id(t), str(name))   # names={123: x} is shown as text
    return by_id


def outputs_of(roots, names: dict | None = None) -> list:
    """Output records for gradviz tensors (taken now: their value and .grad as they are)."""
    by_id = _names_by_id(names)
    outs = []
    for t in roots:
        if t.grad_fn is not None:
            edge = InputRecord(t.grad_fn.id, t.output_nr, tuple(t.shape))
        elif t.requires_grad:
            edge = edge_info(t._accumulator(), 0, tuple(t.shape), by_id)
        else:
            continue
        outs.append(Output(tensor_info(t, by_id.get(id(t))), edge))
    return outs


def replay(roots, recorder: Recorder, names: dict | None = None, order_of=None, with_saved: bool = True) -> dict:
    """Feed `recorder` one NodeCreated per grad_fn behind `roots` (gradviz tensors), oldest
    first, as if it had listened while they were made. Returns {node key: live tensor}
    for the leaves and roots (kept beside the Trace, never in it). with_saved=False: the
    records leave out what the nodes saved (a Trace drawn without saved tensors never reads it)."""
    by_id = _names_by_id(names)
    name_intermediates(recorder, names)
    root_nodes = [t.grad_fn if t.grad_fn is not None else (t._accumulator() if t.requires_grad else None)
                  for t in roots]
    held = _held_outputs([*(names or {}).values(), *roots])
    live: dict = {}
    for node in progress(collect(root_nodes), "recording the graph", unit="node"):
        if type(node) is AccumulateGrad:
            live[("leaf", node.id)] = node.variable
            continue
        info = describe_node(node, by_id, with_saved=with_saved)
        if node.out_data is None and node.id in held:   # released by a backward: the value is still held
            info.value = Preview.of(held[node.id]._data)
        recorder.feed(events.NodeCreated(node, (), (), tuple(node.scope), info))
        if order_of is not None and order_of(node):
            recorder.orders[node.id] = order_of(node)
    for t in roots:
        if t.grad_fn is not None:
            live[("output", t.grad_fn.id, t.output_nr)] = t
    return live


def _held_outputs(tensors) -> dict:
    """node id -> a tensor the caller still holds that is that node's (only) output, unchanged since
    (version 0): after a backward that released the node, its value is read from there, as the
    learner's own variable still shows it."""
    held: dict = {}
    for t in tensors:
        node = getattr(t, "grad_fn", None)
        if isinstance(node, Node) and t.output_nr == 0 and node.op.n_outputs == 1 and t._version == 0:
            held.setdefault(node.id, t)
    return held


def name_intermediates(recorder: Recorder, names: dict | None) -> None:
    """Tell the recorder the names of the non-leaf tensors among `names` ({name: tensor}); a tensor of
    another library (a torch tensor the same code holds) names nothing here."""
    for name, t in (names or {}).items():
        if isinstance(getattr(t, "grad_fn", None), Node):
            recorder.tensor_names.setdefault(t.grad_fn.id, {}).setdefault(t.output_nr, str(name))


def graph_freed(roots) -> bool:
    """True when a backward without retain_graph has freed part of the graph behind `roots`."""
    return any(node.freed for node in collect([t.grad_fn for t in roots if t.grad_fn is not None]))


def leaf_keys(names: dict) -> dict:
    """AccumulateGrad key -> name, for the leaves among `names` ({name: tensor})."""
    return {t._accumulator().id: name for name, t in names.items()
            if t.grad_fn is None and t.requires_grad}


@bulk
def build_trace(roots, names: dict | None = None, show_saved: bool = False, order_of=None,
                ctx_saved: bool = False) -> Trace:
    """The Trace of the graph behind `roots` (gradviz tensors): the graph replayed into a Recorder."""
    roots = tuple(roots)
    recorder = Recorder()
    replay(roots, recorder, names, order_of, with_saved=show_saved or ctx_saved)
    return recorder.trace(outputs_of(roots, names), show_saved, ctx_saved=ctx_saved)
