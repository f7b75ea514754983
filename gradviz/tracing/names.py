"""One symbol per tensor of a Trace: the learner's names, assigned variables, then t₁, t₂, ...

Every view uses the symbols given here, so a tensor is called the same in the diagram, the panel
and the code. The functions read a Trace's nodes, edges and code without importing trace.py, which
calls them to name a Trace read from JSON saved before tensors had symbols.
"""
from __future__ import annotations

from ..naming import FREE_LETTERS, assigned_names, assignment, parameter_name, subscript


def named(trace) -> bool:
    """True once name_tensors gave the trace's op nodes their symbols."""
    return all(n.out_names for n in trace.nodes if n.kind == "op")


def name_tensors(trace, input_keys: dict | None = None) -> None:
    """Give every tensor in the trace one symbol, which every view then uses: the learner's
    names first (leaves, outputs, named intermediates, inputs outside the graph already named; an
    nn.Sequential's 2.bias written [2].bias, which no formula reads as 2 × bias), then the variable a line of code assigned
    (`c = z1.T @ z2 / N` names the division's result c), a name held by several tensors numbered
    in creation order (the doubling loop's y₁, y₂, ...), and the rest numbered t₁, t₂, ... in
    creation order (with the first letter the code does not use). input_keys: (op node id, slot) ->
    the origin's key of the tensor read there without an edge; slots with one key are one tensor
    (a mask two ops use is m in both, not m₁ and m₂)."""
    input_keys = input_keys or {}
    index = {n.id: n for n in trace.nodes}
    into: dict = {}
    out_of: dict = {}
    for e in trace.edges:
        if e.slot >= 0:
            into.setdefault(e.dst, []).append(e)
            out_of.setdefault(e.src, []).append(e)

    def tensor_of(node_id, nr=0):
        # an AccumulateGrad and an output node stand for the tensor on their input edge
        if index[node_id].kind in ("accumulate", "output"):
            edge = next(iter(into.get(node_id, ())), None)
            if edge is not None:
                return tensor_of(edge.src, edge.output_nr)
        return (node_id, nr)

    tensors: list = []      # creation order: a leaf's, an op's inputs without an edge, its outputs
    given: dict = {}        # tensor -> the learner's name
    first: dict = {}        # an input's origin key -> the tensor it was first read as
    same: dict = {}         # an input without an edge read again -> that first tensor
    for node in trace.nodes:
        if node.kind == "leaf":
            tensors.append((node.id, 0))
            if node.name:
                given[(node.id, 0)] = node.name
        elif node.kind == "op":
            consts = node.constant_slots()
            linked = {e.slot for e in into.get(node.id, ())}
            unlinked = [slot for slot in range(len(node.symbols)) if slot not in linked and slot not in consts]
            for slot in unlinked:
                tensor, key = (node.id, "in", slot), input_keys.get((node.id, slot))
                if key is not None and key in first:
                    same[tensor] = first[key]
                    continue
                if key is not None:
                    first[key] = tensor
                tensors.append(tensor)
                if slot < len(node.in_names) and node.in_names[slot]:   # already named by the learner (W in W @ x)
                    given[tensor] = node.in_names[slot]
            learners = dict(enumerate(node.tensor_names or (node.tensor_name,)))
            # the outputs the graph reads, and those the learner named (sign of sign, logdet = slogdet(A))
            nrs = sorted({e.output_nr for e in out_of.get(node.id, ())} | {nr for nr, n in learners.items() if n}) or [0]
            tensors.extend((node.id, nr) for nr in nrs)
            given.update({(node.id, nr): n for nr, n in learners.items() if n})
    for node in trace.nodes:
        if node.kind == "output" and node.name:
            given.setdefault(tensor_of(node.id), node.name)
    for tensor, name in _assigned_values(trace, index, out_of).items():
        given.setdefault(tensor, name)
    # a parameter named as named_parameters() gives it ({"2.bias": p}) with no module variable known
    given = {tensor: parameter_name(name) for tensor, name in given.items()}

    holders: dict = {}
    for tensor in tensors:
        if tensor in given:
            holders.setdefault(given[tensor], []).append(tensor)
    symbol: dict = {}
    for name, held in holders.items():
        for k, tensor in enumerate(held, 1):
            symbol[tensor] = name if len(held) == 1 else name + subscript(k)
    taken = set(holders) | assigned_names(line for _, lines in trace.code.values() for line in lines)
    letter = next((c for c in FREE_LETTERS if c not in taken), "t")
    count = 0
    # the graph's tensors first, then the inputs that are not in it (whose number an origin may not
    # know: torch keeps no trace of the 1 in b * b + 1), so one program numbers its graph alike in both
    for tensor in sorted(tensors, key=lambda t: len(t) == 3):
        if tensor not in symbol:
            count += 1
            symbol[tensor] = letter + subscript(count)

    for node in trace.nodes:
        if node.kind == "leaf":
            node.name = symbol[(node.id, 0)]
        elif node.kind == "output":
            node.name = symbol.get(tensor_of(node.id), node.name)
        elif node.kind == "op":
            top = max((e.output_nr for e in out_of.get(node.id, ())), default=0)
            node.out_names = tuple(symbol.get((node.id, nr), "") for nr in range(top + 1))
            node.in_names = tuple(symbol.get(same.get(t, t), "")
                                  for t in ((node.id, "in", slot) for slot in range(len(node.symbols))))


def _assigned_values(trace, index: dict, out_of: dict) -> dict:
    """(op node id, 0) -> the variable a line of code assigned it to: of the nodes one line made
    in a row, the last is the value assigned (`c = z1.T @ z2 / N`: the division). A line that reads
    its own variable in a loop (`y = y * 2`, `h = tanh(h @ W + x)`) makes one value per pass: its
    run of nodes splits into equal passes, each feeding the next, and each pass's last node is a value."""
    runs: list = []
    for node_id in trace.forward:
        node = index[node_id]
        if node.kind != "op":
            continue   # a leaf's AccumulateGrad: made where the leaf was, not by the line running
        if node.source is None:
            runs.append(None)
            continue
        if runs and runs[-1] is not None and runs[-1][0] == node.source[:2]:
            runs[-1][1].append(node)
        else:
            runs.append((node.source[:2], [node], node.source[2]))
    found: dict = {}
    for run in runs:
        if run is None:
            continue
        _, nodes, text = run
        target = assignment(text)
        if target is None:
            continue
        name, reads_itself = target
        if isinstance(name, tuple):   # q, k, v = x.split(d, 2): the outputs of the line's last node
            last = nodes[-1]
            outputs = max(len(last.out_symbols), len(last.tensor_names),
                          1 + max((e.output_nr for e in out_of.get(last.id, ())), default=0))
            if 1 < outputs <= len(name):   # a node of several outputs, not the last of a tuple of values
                found.update({(last.id, nr): n for nr, n in enumerate(name) if n})
            continue
        period = _pass_length(nodes, out_of) if reads_itself else len(nodes)
        for k in range(period - 1, len(nodes), period):
            found[(nodes[k].id, 0)] = name
    return found


def _pass_length(nodes: list, out_of: dict) -> int:
    """The length of one pass of a loop over one line: the shortest p that splits `nodes` into
    passes of the same ops where each pass reads the one before it's last node."""
    names = [n.name for n in nodes]
    for p in range(1, len(nodes) + 1):
        if len(nodes) % p or names != names[:p] * (len(nodes) // p):
            continue
        chained = all(any(e.dst in {n.id for n in nodes[k + 1:k + 1 + p]} for e in out_of.get(nodes[k].id, ()))
                      for k in range(p - 1, len(nodes) - p, p))
        if chained:
            return p
    return len(nodes)
