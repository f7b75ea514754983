"""The one backward loop, written as a generator of steps.

`backward()` drains it; the interactive stepper advances it one VJP at a time, so
the backward really pauses between steps and `x.grad` can be read halfway.
Nodes run in dependency order (each after all its consumers), newest first among
the ready ones, as PyTorch's CPU engine does.
"""
from __future__ import annotations

import threading
import warnings
from collections import deque
from heapq import heappop, heappush, heappushpop
from typing import Iterator

from numpy import ndarray   # one global load where np.ndarray is two, on the per-op path

from .. import backend, events
from .._args import gradients, type_name
from .._warn import floating_checks_off, floating_checks_on
from ..dtypes import Size
from ..ops.core import NUMPY, namespace
from ..ops.fill import COPY
from ..tensor import Tensor
from .anomaly import _anomaly, anomaly_warning
from .grad_mode import _formula, enable_grad
from .grad_mode import _state as _grad_state
from .hooks import _running
from .nodes import AccumulateGrad, GradientEdge, Node, _building
from .saved import FREED_MESSAGE
from .versions import _clock

# One lock for every write into a .grad: two threads running backward into one shared leaf
# must not lose either's contribution (PyTorch's AccumulateGrad holds a mutex likewise).
_grad_lock = threading.RLock()


class Step:
    """One executed node: what it received, what it sent along each edge, what it wrote."""

    __slots__ = ("index", "node", "grad_outputs", "grad_inputs", "reduced_axes", "accumulated", "hooks",
                 "written_before")

    def __init__(self, index: int, node: Node, grad_outputs: tuple):
        self.index = index
        self.node = node
        self.grad_outputs = grad_outputs   # gradient received, one per output of the node
        self.grad_inputs = ()              # gradient sent per next_functions edge (None: nothing sent)
        self.reduced_axes = ()             # per edge: axes summed to undo broadcasting
        self.accumulated = []              # (tensor, contribution, new total) for each .grad written
        self.hooks = []                    # (output_nr, hook, before, after)
        self.written_before = None         # while listened to: per accumulated entry, the .grad before

    def __repr__(self):
        return f"<Step {self.index}: {self.node.op.torch_name}>"


def broadcast_axes(shape: tuple, big: tuple) -> tuple | None:
    """The axes of `big` a gradient is summed over to return to `shape` after broadcasting
    (None when `shape` does not broadcast to `big`). The one rule: the engine's sum_to, the
    diagrams' Σ marks and the torch bridge all use it."""
    shape, big = tuple(shape), tuple(big)
    lead = len(big) - len(shape)
    if lead < 0 or any(s != 1 and s != b for s, b in zip(shape, big[lead:])):
        return None
    return tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and big[i + lead] != 1)


def sum_to(g, shape: tuple):
    """Sum `g` down to `shape` (undo broadcasting). Returns (gradient, axes summed)."""
    gshape = tuple(g.shape)
    shape = tuple(shape)
    if gshape == shape:
        return g, ()
    lead = len(gshape) - len(shape)
    if shape and lead > 0 and gshape[lead:] == shape and not isinstance(g, Tensor):   # a bias's, the commonest:
        axes = tuple(range(lead))   # leading axes only; the sum has the shape, a fresh array .grad takes
        return g.sum(axis=axes), axes
    axes = broadcast_axes(shape, gshape)
    if axes is None:
        raise ValueError(f"gradient of shape {list(gshape)} cannot be summed to shape {list(shape)}")
    # recorded (create_graph) as torch's at::sum_to records it: a full sum to a 0-d shape (SumBackward0);
    # else a sum keeping the axes (SumBackward1), then a view only where leading axes go (ViewBackward0)
    if not shape and isinstance(g, Tensor):
        return g.sum(), axes
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return (g.reshape(shape) if len(gshape) != len(shape) else g), axes


def _root_edge(tensor):
    return (tensor.grad_fn, tensor.output_nr) if tensor.grad_fn is not None else (tensor._accumulator(), 0)


def _seeds(tensors, grad_tensors, create_graph: bool):
    """The roots' edges, their seeds, and per root whether its seed was made implicitly (no
    gradient given: a scalar's 1)."""
    grad_tensors = gradients(grad_tensors, len(tensors))
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    roots, seeds = [], []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {t.dtype}")
            g = namespace(t._data).ones_like(t._data)
        else:
            if g._data.dtype != t._data.dtype:
                g = g.to(t.dtype)   # PyTorch casts the seed to the output's dtype
            if tuple(g.shape) != tuple(t.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g.shape)} and "
                                   f"output[{i}] has a shape of {Size(t.shape)}.")
            if g.device != t.device:
                raise RuntimeError(f"invalid gradient at index {i} - expected device {t.device} but got {g.device}")
            g = g if create_graph else g._data
        if create_graph and not isinstance(g, Tensor):
            g = Tensor._make(g)
        roots.append(_root_edge(t))
        seeds.append(g)
    return roots, seeds, tuple(g is None for g in grad_tensors)


def _count_dependencies(roots, targets=None, run_targets=True) -> tuple[dict, set | None, set]:
    """How many edges lead into each node that will run (iterative: no recursion limit).

    With `targets` (the inputs of grad() or backward(inputs=...)), only the nodes on a path
    to a target take part, as PyTorch's exec_info; a target itself runs only if
    `run_targets` or another target lies below it. Returns (deps, useful, not run)."""
    start = list(dict.fromkeys(node for node, _ in roots))   # roots may share a node (outputs of split)
    useful = None
    halt: set = set()
    if targets is not None:
        parents: dict = {}
        stack, seen = list(start), set(start)
        while stack:
            node = stack.pop()
            for nxt in node.next_nodes:
                if nxt is None:
                    continue
                parents.setdefault(nxt, []).append(node)
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        useful = {t for t in targets if t in seen}
        stack = list(useful)
        while stack:
            for parent in parents.get(stack.pop(), ()):
                if parent not in useful:
                    useful.add(parent)
                    stack.append(parent)
        if not run_targets:
            halt = {t for t in useful & set(targets)
                    if not any(nxt in useful for nxt in t.next_nodes)}
        start = [n for n in start if n in useful]
    deps: dict = {}
    stack = start
    starts = set(stack)
    while stack:
        node = stack.pop()
        if halt and node in halt:
            continue
        if node.freed:
            raise RuntimeError(FREED_MESSAGE)
        for nxt in node.next_nodes:
            if nxt is None or (useful is not None and nxt not in useful):
                continue
            count = deps.get(nxt)
            if count is None:   # first reached: visit it (a root is visited already)
                deps[nxt] = 1
                if nxt not in starts:
                    stack.append(nxt)
            else:
                deps[nxt] = count + 1
    return deps, useful, halt


def ready_key(node) -> tuple:
    """AccumulateGrad first, then the newest op: PyTorch's ready-queue order on the CPU.
    Priorities are unique, so the heap never compares two nodes."""
    return (node.id - (1 << 62) if type(node) is AccumulateGrad else -node.id, node)


class _Inside:
    """What holds while a backward's nodes run: the grad mode torch gives hooks and VJPs (on only
    when building the gradient's graph), NumPy's floating-point warnings off (torch's VJPs meet inf · 0
    and the like silently), the run as this thread's current backward, and the order of the nodes a
    step builds. Left between steps (leave/enter), so the caller's own mode holds; left
    on an error, it rolls back every .grad the run wrote."""

    __slots__ = ("run", "outer", "previous", "base", "inside", "checks")

    def __init__(self, run):
        self.run = run

    def __enter__(self):
        self.previous, _running.run = _running.run, self.run
        self.base = _building.now   # the order of nodes made outside the steps (and after the run)
        self.enter()
        return self

    def enter(self) -> None:
        self.outer, _grad_state.enabled = _grad_state.enabled, self.run.create_graph
        self.checks = floating_checks_off()
        self.inside = True

    def leave(self) -> None:
        _grad_state.enabled, _building.now = self.outer, self.base
        floating_checks_on(self.checks)
        self.inside = False

    def __exit__(self, kind, error, traceback):
        if self.inside:
            self.leave()
        _running.run = self.previous
        if kind is not None and kind is not GeneratorExit:   # a step-by-step run abandoned halfway keeps
            self.run._roll_back()   # what it wrote; an error (or Ctrl-C) midway leaves no .grad half-updated


class Backward:
    """One backward pass. Iterate it to run one node per step; errors in the arguments
    are raised at construction, before any gradient is touched."""

    def __init__(self, tensors, grad_tensors=None, retain_graph=None, create_graph=False,
                 accumulate=True, only=None, capture=(), targets=None, run_targets=True):
        if isinstance(tensors, Tensor):
            tensors = (tensors,)
        tensors = tuple(tensors)
        self.roots, self.seeds, self.implicit = _seeds(tensors, grad_tensors, create_graph)
        self.deps, self.useful, self.halt = _count_dependencies(self.roots, targets, run_targets)
        self.retain_graph = create_graph if retain_graph is None else retain_graph
        self.create_graph = create_graph
        self.accumulate = accumulate
        self.only = only                      # AccumulateGrad nodes allowed to write (None: all)
        self.capture: dict = {}                                  # (node, nr) -> slots (an input may repeat)
        for i, key in enumerate(capture):
            self.capture.setdefault(key, []).append(i)
        self.captured = [None] * len(capture)
        self._handed_out = {id(g) for g in self.seeds}   # arrays that must not become a .grad as they are
        self._pausing = True                  # a pause after each step (the stepper); run() clears it
        self._buffers = None                  # gradients received per node (made once running)
        self._heap: list = []                 # the nodes ready to run, by ready_key (filled once running)
        self._iter = self._run()

    def __iter__(self) -> Iterator[Step]:
        return self._iter

    def __next__(self) -> Step:
        return next(self._iter)

    def upcoming(self):
        """The node the next step will run; None before the first step and once none is ready
        (the next step then finishes the pass). A stepper reads it to keep a run of steps together."""
        return self._heap[0][1] if self._heap else None

    def run(self) -> "Backward":
        """Run every remaining step without pausing between them."""
        self._pausing = False
        deque(self._iter, maxlen=0)
        return self

    # -- the loop ------------------------------------------------------------------------------
    def _run(self) -> Iterator[Step]:
        """micrograd's `for node in reversed(topo): node._backward()`, one node per step: a node
        runs once every consumer has sent it a gradient (receive), its VJP turns that into one
        gradient per input (call the VJP), and each goes into its input node's buffer (send); a
        leaf's AccumulateGrad adds what it received into `.grad` instead (accumulate, in _step)."""
        heap, buffers, deps, useful = self._start(), self._buffers, self.deps, self.useful
        create_graph, retain_graph, listening, pausing = self.create_graph, self.retain_graph, self._listening, \
            self._pausing
        plain = self._plain(pausing)
        held = None   # the node the last step made ready: it runs next unless the heap holds an older one
        index = 0
        with _Inside(self) as inside:
            while held is not None or heap:
                if held is None:
                    node = heappop(heap)[1]
                else:
                    node, held = heappushpop(heap, ready_key(held))[1] if heap else held, None
                grads = buffers.pop(node)   # one output: its gradient; else a list by output   # receive
                if create_graph:   # what the step builds (VJP, sums of what it sends) is one order up
                    _building.now = node.order + 1
                if plain and node.hooks is None and type(node) is not AccumulateGrad:    # call the VJP
                    step, sent = None, node_vjp(node, grads if node.op.n_outputs == 1 else
                                                self._multi(node, grads), create_graph)[0]
                else:   # hooks, a captured gradient, a leaf, or someone watching: a described step
                    step, sent = self._step(index, node, grads)
                if sent is not None:                                                     # send
                    for nxt, nr, g in zip(node.next_nodes, node.next_nrs, sent):
                        if nxt is None or (useful is not None and nxt not in useful):
                            continue
                        if g is not None:
                            if nxt.op.n_outputs == 1 and nxt not in buffers:   # the first to reach nxt: no sum
                                buffers[nxt] = g
                            else:
                                self._add(buffers, nxt, nr, g)
                        remaining = deps[nxt] = deps[nxt] - 1
                        if remaining == 0:
                            if g is None and nxt not in buffers:   # (a gradient sent is in buffers)
                                self._skip(nxt)
                            elif held is None:
                                held = nxt
                            else:
                                heappush(heap, ready_key(nxt))
                index += 1
                # before the node is freed, a listener may read what it saved; a grad() input's node
                # does not run (torch's engine does not call it either), so no listener hears of it
                if listening and not (self.halt and node in self.halt):
                    events.emit(events.NodeExecuted(step))
                if sent is not None and not retain_graph:
                    node.free()
                if pausing:   # the stepper reads the ready nodes (upcoming()) and .grad between steps
                    if held is not None:
                        heappush(heap, ready_key(held))
                        held = None
                    inside.leave()
                    yield step
                    inside.enter()
                    pausing = self._pausing   # run() stops the pauses: the steps left may then be plain
                    plain = self._plain(pausing)
        if listening:
            events.emit(events.BackwardFinished(index))

    def _plain(self, pausing: bool) -> bool:
        """Are the steps nothing but VJPs? Not while someone listens or pauses, in anomaly mode, or
        when a gradient is captured (grad()) or a node must not run."""
        return not (self._listening or pausing or _anomaly.enabled or self.capture or self.halt)

    def _step(self, index: int, node: Node, grads) -> tuple:
        """A step that is more than its VJP: the node's hooks and the gradients captured on the way
        in (receive), a leaf's .grad (accumulate), the VJP with its post-hooks, all in a Step for
        whoever watches. Returns the Step and what to send (None: nothing is sent)."""
        if node.op.n_outputs == 1:
            grads = [grads]
        step = Step(index, node, tuple(grads))
        if node.hooks is not None or self.capture:
            grads = self._receive(node, grads, step)
        if type(node) is AccumulateGrad:                                                 # accumulate
            if self.accumulate and (self.only is None or node in self.only):
                self._accumulate_leaf(node, grads[0], step)
            return step, None
        if self.halt and node in self.halt:   # an input of grad(): its gradient is what was asked
            return step, None
        return step, self._call_vjp(node, grads, step)

    def _start(self) -> list:
        """The seeds into the roots' buffers; the roots that wait for nothing are ready (the heap)."""
        self._listening = listening = events.listening()
        self._buffers = {}
        self._touched = []   # (tensor, old grad Tensor, old array) to undo on error
        for (node, nr), g in zip(self.roots, self.seeds):
            self._add(self._buffers, node, nr, g)
        for node in dict.fromkeys(node for node, _ in self.roots):   # roots may share a node (outputs of split)
            if self.deps.get(node, 0) == 0 and (self.useful is None or node in self.useful):
                heappush(self._heap, ready_key(node))
        if listening:
            events.emit(events.BackwardStarted(tuple(self.roots), tuple(self.seeds), self.implicit))
        return self._heap

    def _receive(self, node: Node, grads: list, step: Step) -> list:
        """The gradients a node received, through its tensor hooks and pre-hooks; retained and
        captured (grad()'s inputs) on the way."""
        hooks = node.hooks
        if hooks is not None:
            if hooks.tensor or hooks.pre:
                grads = self._run_pre_hooks(node, grads, step, self._listening)
                step.grad_outputs = tuple(grads)
            if hooks.retains:
                self._retain(node, grads, step, self._touched, self._listening)
        if self.capture:
            for nr, g in enumerate(grads):
                for slot in self.capture.get((node, nr), ()):
                    self.captured[slot] = g
        return grads

    def _call_vjp(self, node: Node, grads: list, step: Step) -> tuple:
        """The node's VJP on what it received: one gradient per input edge (post-hooks applied)."""
        g = grads[0] if node.op.n_outputs == 1 else self._multi(node, grads)
        if _anomaly.enabled:
            sent, axes = _anomaly_vjp(node, g, self.create_graph)
        else:
            sent, axes = node_vjp(node, g, self.create_graph)
        hooks = node.hooks
        if hooks is not None and hooks.post:
            sent = self._run_node_hooks(node, sent, g)
        step.grad_inputs = tuple(sent)
        step.reduced_axes = axes
        return sent

    def _accumulate_leaf(self, node: AccumulateGrad, g, step: Step) -> None:
        """.grad += g on the leaf, then its post-accumulate hooks."""
        self._accumulate(node, g, step, self._touched, self._listening)
        hooks = node.hooks
        if hooks is not None and hooks.post:
            for hook in tuple(hooks.post.values()):   # torch calls them with ((), (grad,))
                hook((), (_as_tensor(g),))
        if hooks is not None and hooks.post_accumulate:
            for hook in tuple(hooks.post_accumulate.values()):
                if hook(node.variable) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")

    def _roll_back(self) -> None:
        for tensor, old_grad, old_data in reversed(self._touched):
            tensor._grad = old_grad
            if old_grad is not None:
                old_grad._data = old_data

    def will_reach(self, tensor) -> bool:
        """Does this backward send a gradient towards `tensor` (its node takes part)?"""
        node = tensor.grad_fn if tensor.grad_fn is not None else tensor._accum
        if node is None:
            return False
        return node in self.deps or any(node is root for root, _ in self.roots)

    @staticmethod
    def _add(buffers: dict, node: Node, nr: int, g) -> None:
        """g into what `node` received: one gradient for a one-output node (no list to build, the
        commonest case), a list of one per output for the others; summed out of place (gradients
        may alias)."""
        buf = buffers.get(node)
        if node.op.n_outputs == 1:
            buffers[node] = g if buf is None else buf + g
            return
        if buf is None:
            buf = buffers[node] = [None] * node.op.n_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g   # out of place: gradients may alias

    def _skip(self, node: Node) -> None:
        """A node that received no gradient at all: release its consumers' counts (iteratively)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if n in self.halt:
                continue
            for nxt in n.next_nodes:
                if nxt is None or (self.useful is not None and nxt not in self.useful):
                    continue
                self.deps[nxt] -= 1
                if self.deps[nxt] == 0:
                    if nxt in self._buffers:
                        heappush(self._heap, ready_key(nxt))
                    else:
                        stack.append(nxt)

    def _multi(self, node: Node, grads: list) -> tuple:
        """A multi-output node's upstream gradients, zeros where an output got none (None
        for a custom Function that called ctx.set_materialize_grads(False))."""
        if not node.materialize_grads:
            return tuple(grads)
        return tuple(gi if gi is not None else _zeros_like_output(node, i, self.create_graph)
                     for i, gi in enumerate(grads))

    def _run_pre_hooks(self, node: Node, grads: list, step: Step, listening: bool) -> list:
        grads = list(grads)
        for nr, hooks in node.hooks.tensor.items():
            for hook in tuple(hooks.values()):
                if grads[nr] is None:
                    continue
                before = grads[nr]
                wrapped = before if isinstance(before, Tensor) else Tensor._make(before)
                result = hook(wrapped)
                after = None
                if result is not None:
                    _check_hook_result(hook, wrapped, result)
                    after = result if self.create_graph else result._data
                    if not self.create_graph:
                        self._handed_out.add(id(after))   # the hook's tensor is the user's: .grad copies it
                    grads[nr] = after
                step.hooks.append((nr, hook, before, after))
                if listening:
                    events.emit(events.HookFired(node, nr, hook, before, after))
        if self.halt and node in self.halt:
            return grads                                 # a grad() input's node does not run: no node hooks
        for hook in tuple(node.hooks.pre.values()):
            result = hook(tuple(_as_tensor(g) for g in grads))
            if result is not None:
                grads = [_unwrap(r, self.create_graph) for r in result]
            step.hooks.append((None, hook, None, result))
        return grads

    def _run_node_hooks(self, node: Node, sent: list, g) -> list:
        outs = g if isinstance(g, tuple) else (g,)
        for hook in tuple(node.hooks.post.values()):
            result = hook(tuple(_as_tensor(s) for s in sent), tuple(_as_tensor(o) for o in outs))
            if result is not None:
                sent = [_unwrap(r, self.create_graph) for r in result]
        return sent

    def _store_grad(self, tensor, node, g, step: Step, touched: list, listening: bool) -> None:
        """tensor.grad += g (or = a copy of g), remembering the old value for rollback."""
        with _grad_lock:
            old = tensor._grad
            before = None if old is None else old._data   # replaced, never written in place
            total = self._write_grad(tensor, node, g, touched)
        step.accumulated.append((tensor, g, total))
        if listening:
            if step.written_before is None:
                step.written_before = []
            step.written_before.append(before)
            events.emit(events.GradAccumulated(tensor, node, g, total, before))

    def _write_grad(self, tensor, node, g, touched: list):
        """The read-modify-write of .grad (under the lock); returns the new total."""
        old = tensor._grad
        touched.append((tensor, old, None if old is None else old._data))
        if self.create_graph:
            g = g if isinstance(g, Tensor) else Tensor._make(g)
            if old is not None:
                tensor._grad = old + g
            else:
                # a copy that stays in the graph, recorded as torch records it: a leaf's .grad is
                # CopyBackwards (copied into a fresh tensor), a retained gradient CloneBackward0
                with enable_grad():
                    if type(node) is AccumulateGrad:
                        blank = Tensor._make(namespace(g._data).zeros_like(g._data))
                        tensor._grad = Tensor._namespace.apply(COPY, (blank, g))
                    else:
                        tensor._grad = g.clone()
        elif old is None:   # torch's gradient layout contract: laid out as the leaf (a sum of transposed
            order = _layout_of(tensor._data)   # gradients is F-ordered in NumPy, and .grad.view(-1) must work)
            fresh = self._unshared(g)
            tensor._grad = Tensor._make(g if fresh and _laid_out(g, order) else g.copy(order=order))
        else:
            old._data = old._data + g
            old._bump()
        return tensor._grad._data

    def _unshared(self, g) -> bool:
        """True when `g` is a fresh array nobody else holds, so .grad may take it without a copy.

        Pass-through rules (add, view, expand) hand on the very array they received, and
        the seed is the caller's; a .grad that aliased them would change when they do."""
        fresh = getattr(g, "flags", None) is not None and g.flags.owndata and backend.writeable(g) \
            and id(g) not in self._handed_out
        self._handed_out.add(id(g))
        return fresh

    def _accumulate(self, node: AccumulateGrad, g, step: Step, touched: list, listening: bool) -> None:
        var = node.variable
        if not self.create_graph and g.dtype != var._data.dtype:
            g = g.astype(var._data.dtype)
        self._store_grad(var, node, g, step, touched, listening)

    def _retain(self, node: Node, grads: list, step: Step, touched: list, listening: bool) -> None:
        for nr, ref in node.hooks.retains.items():
            tensor = ref()
            if tensor is not None and grads[nr] is not None:
                self._store_grad(tensor, node, grads[nr], step, touched, listening)


def node_vjp(node: Node, g, create_graph: bool = False) -> tuple[tuple, tuple]:
    """Run `node`'s VJP on the upstream gradient `g` without touching any state.

    Returns the gradient for each next_functions edge (None where nothing flows), summed
    to the input's shape, and the axes summed to undo broadcasting. The engine calls
    it once per step; visualizers call it on one-hot `g`s to materialize a Jacobian."""
    op = node.op
    if node.freed:
        raise RuntimeError(FREED_MESSAGE)
    if op.saves and node.epoch != _clock.now:   # no in-place write anywhere since: nothing to check
        node.check_versions()
    saved_inputs, saved_out = node.inputs, node.out_data
    hooked = node.saved is not None   # read once (CPython caches a line's reads for one node class at a time)
    if hooked:   # saved-tensor hooks: the VJP reads what unpack gives back
        saved_inputs, saved_out = node.unpacked()
    if create_graph:
        TENSOR = Tensor._namespace
        outs = node.output(0) if op.n_outputs == 1 else tuple(node.output(i) for i in range(op.n_outputs))
        if saved_out is not node.out_data and op.n_outputs == 1:
            outs = Tensor._make(saved_out, node, 0)
        outer, _formula.active = _formula.active, True   # the gradient's graph names nodes as torch's formulas
        order, _building.now = _building.now, node.order + 1   # the nodes the rule makes: one order higher
        try:
            with enable_grad():
                raw = _call_rule(op.vjp, node, TENSOR, g, outs, saved_inputs)
        finally:
            _formula.active = outer
            _building.now = order
    else:
        if type(g) is ndarray:
            xp = NUMPY
        else:   # a CuPy array, or one gradient per output of a multi-output node
            xp = namespace(g if op.n_outputs == 1 else next(gi for gi in g if gi is not None))
        out = saved_out if saved_out is not None else node.out_meta
        rule = op.vjp
        if type(rule) is tuple and len(rule) == 2 and len(saved_inputs) == 2:   # most nodes: no lists built
            f0, f1 = rule
            to0, to1 = node.next_nodes
            a0, a1 = saved_inputs[0]._data, saved_inputs[1]._data
            params = node.params
            if params:   # f(*args) with a ready tuple is much cheaper than f(xp, g, ..., *params)
                args = (xp, g, out, a0, a1) + params
                g0 = None if f0 is None or to0 is None else f0(*args)
                g1 = None if f1 is None or to1 is None else f1(*args)
            else:   # a plain call builds no tuple
                g0 = None if f0 is None or to0 is None else f0(xp, g, out, a0, a1)
                g1 = None if f1 is None or to1 is None else f1(xp, g, out, a0, a1)
            raw = (g0, g1)
            if (g0 is None or (g0.shape == a0.shape and g0.dtype is a0.dtype)) and \
                    (g1 is None or (g1.shape == a1.shape and g1.dtype is a1.dtype)) and not hooked:
                return raw, _NO_AXES_2   # both already fit their inputs: nothing to sum or cast
        elif type(rule) is tuple and len(rule) == 1 and len(saved_inputs) == 1 and op.keeps is None:   # relu, exp, ...
            f0, = rule
            a0, params = saved_inputs[0]._data, node.params
            g0 = None if f0 is None or node.next_nodes[0] is None else \
                f0(xp, g, out, a0, *params) if params else f0(xp, g, out, a0)
            raw = (g0,)
            if (g0 is None or (g0.shape == a0.shape and g0.dtype is a0.dtype)) and not hooked:
                return raw, _NO_AXES_1
        else:
            # what the forward kept, unless saved-tensor hooks hand the rule other values to read
            raw = _call_rule(rule, node, xp, g, out, [t._data for t in saved_inputs],
                             None if op.keeps is None or hooked else node.kept)
    inputs, edges = node.inputs, node.next_nodes
    axes = None   # made only when a gradient is summed to undo broadcasting
    for i, gi in enumerate(raw):
        if gi is None:
            continue
        a = inputs[i]._data   # the input's shape and dtype are what its gradient must have
        if edges[i] is None or gi.shape != a.shape or gi.dtype is not a.dtype:
            if axes is None:
                raw, axes = list(raw), [()] * len(raw)
            raw[i], axes[i] = _fit(gi, a, i, edges[i] is None, op, create_graph)
    if axes is None:
        return raw if type(raw) is tuple else tuple(raw), ((),) * len(raw)
    return tuple(raw), tuple(axes)



_NO_AXES_1, _NO_AXES_2 = ((),), ((), ())


def _fit(gi, a, i: int, unused: bool, op, create_graph: bool):
    """Gradient `gi` for input `a` as the edge takes it: None where the edge leads nowhere, else
    summed to undo broadcasting and cast to the input's dtype. Returns it and the axes summed."""
    if unused:
        return None, ()
    summed = ()
    if gi.shape != a.shape:
        try:
            gi, summed = sum_to(gi, a.shape)
        except ValueError:
            raise RuntimeError(f"Function {op.torch_name} returned an invalid gradient at index {i} - got "
                               f"{list(gi.shape)} but expected shape compatible with {list(a.shape)}") from None
    if create_graph:   # a Tensor: the cast is recorded (ToCopyBackward0), as torch's validate_outputs does
        if gi._data.dtype != a.dtype:
            TENSOR = Tensor._namespace
            gi = TENSOR.astype(gi, a.dtype)
    elif gi.dtype != a.dtype:
        gi = gi.astype(a.dtype)
    return gi, summed


def _anomaly_vjp(node: Node, g, create_graph: bool):
    """node_vjp under anomaly mode: a failing (or, with check_nan, nan-returning) VJP first
    warns with the forward line that created the node."""
    try:
        sent, axes = node_vjp(node, g, create_graph)
        if _anomaly.check_nan:
            for i, gi in enumerate(sent):
                data = gi._data if hasattr(gi, "_data") else gi
                if data is not None and data.dtype.kind == "f" and namespace(data).isnan(data).any():
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    except Exception:
        anomaly_warning(node)
        raise
    return sent, axes


def _call_rule(rule, node: Node, xp, g, out, args, kept=None) -> list:
    """A rule is one function returning every input's gradient, or a tuple of one function
    per input (None: not differentiable); those run only for inputs that need a gradient.
    `kept`: what the op's forward kept for them (see Op.keeps), handed on as `kept=`."""
    if kept is not None:
        if type(rule) is not tuple:
            return rule(xp, g, out, *args, *node.params, kept=kept)
        return [None if f is None or nxt is None else f(xp, g, out, *args, *node.params, kept=kept)
                for f, nxt in zip(rule, node.next_nodes)]
    if type(rule) is not tuple:
        return rule(xp, g, out, *args, *node.params)
    return [None if f is None or nxt is None else f(xp, g, out, *args, *node.params)
            for f, nxt in zip(rule, node.next_nodes)]


def _zeros_like_output(node: Node, i: int, create_graph: bool):
    data = node.output_data()[i]
    z = namespace(data).zeros_like(data)
    if create_graph:
        return Tensor._make(z)
    return z


def _check_hook_result(hook, before, after) -> None:
    """PyTorch's checks on what a tensor hook returned."""
    if not isinstance(after, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(after).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if tuple(after.shape) != tuple(before.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if after._data.dtype != before._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {before.type()} got {after.type()})")


def _as_tensor(g):
    return None if g is None or isinstance(g, Tensor) else Tensor._make(g)


def _unwrap(g, create_graph: bool):
    if g is None or create_graph:
        return g
    return g._data


def backward_steps(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> Backward:
    """Start a backward pass and return it unstarted: each next() runs one node and returns its Step."""
    only, capture = None, ()
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:
            if not t.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        only = {t._accumulator() for t in inputs if t.grad_fn is None}
        capture = [(t.grad_fn, t.output_nr) for t in inputs if t.grad_fn is not None]
        targets = only | {node for node, _ in capture}
        run = Backward(tensors, grad_tensors, retain_graph, create_graph, only=only, capture=capture,
                       targets=targets)
        run._nonleaf_inputs = [t for t in inputs if t.grad_fn is not None]
        return run
    return Backward(tensors, grad_tensors, retain_graph, create_graph)


def grad_steps(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False) -> Backward:
    """torch.autograd.grad's pass, unstarted (see backward_steps): it runs only the nodes between
    `outputs` and `inputs`, writes no .grad and leaves the inputs' gradients in `.captured`."""
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, (Tensor, GradientEdge)) else tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in inputs:   # a name or a number among them: torch's words, not an AttributeError
        if not isinstance(t, (Tensor, GradientEdge)):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type_name(t)}")
    if not all(isinstance(t, GradientEdge) or t.requires_grad for t in inputs):
        _seeds(outputs, grad_outputs, create_graph)   # torch checks the outputs first: their errors come first
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    capture = [tuple(t) if isinstance(t, GradientEdge) else _root_edge(t) for t in inputs]
    return Backward(outputs, grad_outputs, retain_graph, create_graph, accumulate=False, capture=capture,
                    targets={node for node, _ in capture}, run_targets=False)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """torch.autograd.backward: accumulate d(tensors)/d(leaves) into the leaves' .grad."""
    run = backward_steps(tensors, grad_tensors, retain_graph, create_graph, inputs)
    run.run()
    for t, g in zip(getattr(run, "_nonleaf_inputs", ()), run.captured):
        if g is not None:
            gt = g if isinstance(g, Tensor) else Tensor._make(g.copy())
            t._grad = gt if t._grad is None else t._grad + gt


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: the gradients of `outputs` w.r.t. `inputs`, without touching .grad (a dict of
    inputs gives a dict; is_grads_batched takes the first dim of each grad_output as a batch, run one at a
    time here where torch vmaps one backward)."""
    if isinstance(inputs, dict):
        return dict(zip(inputs.keys(), grad(outputs, tuple(inputs.values()), grad_outputs, retain_graph, create_graph,
                                            only_inputs, allow_unused, is_grads_batched, materialize_grads)))
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    inputs = (inputs,) if isinstance(inputs, (Tensor, GradientEdge)) else tuple(inputs)
    run = grad_steps(outputs, inputs, grad_outputs, retain_graph, create_graph).run()
    result = []
    for i, (t, g) in enumerate(zip(inputs, run.captured)):
        if g is None:
            if materialize_grads and not isinstance(t, GradientEdge):
                g = namespace(t._data).zeros_like(t._data)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        result.append(None if g is None else (g if isinstance(g, Tensor) else Tensor._make(g)))
    return tuple(result)


def _layout_of(a) -> str:
    """The memory order a leaf's .grad takes: the leaf's own when it is F-contiguous only, else C."""
    flags = a.flags
    return "F" if flags.f_contiguous and not flags.c_contiguous else "C"


def _laid_out(g, order: str) -> bool:
    return g.flags.c_contiguous if order == "C" else g.flags.f_contiguous


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad with is_grads_batched: one backward per row of the grad_outputs, the results stacked (torch's
    shape check and words first)."""
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    seeds = gradients(grad_outputs, len(outputs))
    for i, (out, g) in enumerate(zip(outputs, seeds)):
        if g is not None and tuple(g.shape[1:]) != tuple(out.shape):
            raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
                               f"shape of {Size(g.shape[2:])} and output[{i}] has a shape of {Size(out.shape)}. If "
                               "you only want some tensors in `grad_output` to be considered batched, consider using "
                               "vmap.")   # torch names the shape of grad_output[k][0][1:]
    batch = next((g.shape[0] for g in seeds if g is not None), 1)
    retain = create_graph if retain_graph is None else retain_graph
    rows = [grad(outputs, inputs, [None if g is None else g[k] for g in seeds], retain or k < batch - 1,
                 create_graph, allow_unused=allow_unused, materialize_grads=materialize_grads) for k in range(batch)]
    # stacked by the Tensor namespace, so with create_graph the stack is recorded (torch's vmap records its own)
    return tuple(None if column[0] is None else Tensor._namespace.stack(list(column), 0) for column in zip(*rows))
