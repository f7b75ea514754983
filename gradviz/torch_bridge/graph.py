"""Walking torch's graph: the node a backward starts at, every node behind the roots in the
order gradviz numbers its own (creation order), and what a node says about its outputs."""
from __future__ import annotations

import heapq

from ..previews import Preview
from .support import device_name, dtype_name, is_accumulate, sequence_nr, torch_module


def metadata_preview(fn) -> Preview | None:
    """Shape, dtype and device of a single-output node's output, from the node's input metadata."""
    try:
        meta = fn._input_metadata
    except (AttributeError, RuntimeError):
        return None
    if len(meta) != 1:
        return None
    return Preview(tuple(meta[0].shape), dtype_name(meta[0].dtype), device_name(meta[0].device))


def output_shape(fn, nr: int) -> tuple | None:
    """The shape of `fn`'s forward output `nr`: what flows forward along an edge out of fn."""
    try:
        return tuple(fn._input_metadata[nr].shape)
    except (AttributeError, IndexError, RuntimeError):
        variable = getattr(fn, "variable", None)
        return None if variable is None else tuple(variable.shape)


def n_outputs(fn) -> int:
    try:
        return len(fn._input_metadata)
    except (AttributeError, RuntimeError):
        return 1


def root_node(tensor):
    """The node a backward from `tensor` starts at: its grad_fn, or a leaf's AccumulateGrad."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn
    if not tensor.requires_grad:
        return None
    return torch_module().autograd.graph.get_gradient_edge(tensor).node


def post_order(root_nodes) -> dict:
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


def creation_order(root_nodes, post: dict | None = None) -> list:
    """Every node reachable from the roots, inputs first, in the order gradviz numbers its own.

    gradviz numbers nodes as the forward creates them. torch keeps the same count per node:
    `_sequence_nr()`, a per-thread counter its engine also uses to pick the next ready node.
    So ops go by sequence number (within a topological order, which that counter always
    respects on one thread); an AccumulateGrad has no meaningful number and goes right before
    its first consumer, ordered by slot, which is when gradviz creates its own. Where torch
    exposes no sequence numbers the post-order from the roots stands in for them (`post`: that
    post-order where the caller has it).
    """
    post = post_order(root_nodes) if post is None else post
    nodes = list(post)
    ops = [fn for fn in nodes if not is_accumulate(fn)]
    numbers = {fn: sequence_nr(fn) for fn in ops}
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
