"""`record_forward`: watching a torch forward pass for what the finished graph no longer says:
which nn.Module created each node (diagram clusters, named as gradviz.nn names its scopes), the
value each op produced (node labels) and the line of the learner's code that made it (lines.py)."""
from __future__ import annotations

from contextlib import contextmanager

from . import lines, numbers
from .graph import metadata_preview
from .names import scope_segments
from .previews import preview
from .support import is_accumulate, sequence_nr, torch_module


class ForwardRecord:
    """What `record_forward` saw: the scope path and the output value of each node created.

    It holds the nodes it saw (torch nodes take no weak references), so it keeps their
    graph alive until it is dropped.
    """

    def __init__(self):
        self.scopes: dict = {}   # torch node -> scope path, e.g. ("MLP", "fc1 (Linear)")
        self.values: dict = {}   # torch node -> Preview of its output when it was computed
        self._path: list = []
        self._starts: list = []  # per module being run: the sequence number its first node would get
        self._seen: set = set()
        self._first = None       # sequence number of the first node made while recording
        self.line_for = lines.learner_line   # the line a new node gets (kept in its metadata)

    @contextmanager
    def scope(self, name: str):
        """Nodes created inside get `name` appended to their scope path (gradviz.scope for torch)."""
        self._path.append(str(name))
        try:
            yield
        finally:
            self._path.pop()

    def _claim(self, result, start: int) -> None:
        """Give each node made since the last call the current scope, and those made since sequence
        number `start` (by the call that returned `result`) the line making it; record op outputs' values."""
        torch = torch_module()
        lines.claim(result, start, self.line_for)
        tensors = result if isinstance(result, (tuple, list)) else (result,)
        for t in tensors:
            if not isinstance(t, torch.Tensor) or t.grad_fn is None:
                continue
            fn = t.grad_fn
            if fn not in self._seen and metadata_preview(fn) is not None:
                self.values[fn] = preview(t)
            # a composite call (cross_entropy, a module) made nodes nobody returned: walk back
            # to the nodes already seen, or made before recording began, and claim the rest
            stack = [fn]
            while stack:
                node = stack.pop()
                if node is None or node in self._seen or is_accumulate(node):
                    continue
                nr = sequence_nr(node)
                if self._first is not None and nr is not None and nr < self._first:
                    continue
                self._seen.add(node)
                self.scopes[node] = tuple(self._path)
                stack.extend(nxt for nxt, _ in node.next_functions)


@contextmanager
def record_forward(module=None):
    """Watch a torch forward pass; pass the record to trace_from_torch / record_torch_backward.

        with record_forward(model) as rec:
            loss = F.cross_entropy(model(x), y)
        trace = trace_from_torch(loss, params=dict(model.named_parameters()), forward=rec)

    A TorchFunctionMode sees every torch call made in the block and records its output's value
    and the line of the learner's code that made it (kept in each node's `metadata`, so the code
    panel of `animate(loss)` or `draw(loss)` shows it after the block too); with `module`, forward
    hooks on it and its submodules put each node made inside a module's forward into that module's
    scope, so diagrams cluster them by module name.
    """
    torch = torch_module()
    record = ForwardRecord()
    with torch.enable_grad():
        # a throwaway node tells where torch's node counter stands: older nodes are not ours
        probe = torch.zeros((), requires_grad=True) * 1
    record._first = sequence_nr(probe.grad_fn)
    del probe

    class _Watch(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if lines.compiling():
                return func(*args, **(kwargs or {}))
            start = lines.next_number()
            result = func(*args, **(kwargs or {}))
            record._claim(result, start)
            numbers.keep(result, start, args, kwargs, lines.next_number())
            return result

    handles = []
    if module is not None:
        for m, segment in scope_segments(module).items():
            def enter(mod, args, segment=segment):
                record._path.append(segment)
                record._starts.append(None if lines.compiling() else lines.next_number())

            def leave(mod, args, output):
                # whatever the module made that no torch call returned (a custom Function's node)
                start = record._starts.pop()
                if start is not None and not lines.compiling():
                    record._claim(output, start)
                record._path.pop()
            handles.append(m.register_forward_pre_hook(enter))
            handles.append(m.register_forward_hook(leave, always_call=True))
    try:
        with _Watch():
            yield record
    finally:
        for handle in handles:
            handle.remove()
