"""The one backward loop, written as a generator of steps.

`backward()` drains it; the interactive stepper advances it one VJP at a time, so
the backward really pauses between steps and `x.grad` can be read halfway.
Nodes run in dependency order (each after all its consumers), newest first among
the ready ones, as PyTorch's CPU engine does.
"""
from __future__ import annotations

import math
import threading
from collections import deque
from typing import Iterator

import numpy as np
from numpy import ndarray   # one global load where np.ndarray is two, on the per-op path

from .. import backend, events
from .._args import gradients
from ..dtypes import Size
from ..ops.core import NUMPY, namespace
from ..ops.fill import COPY
from ..previews import Preview
from ..records import Accumulation, Hook, StepRecord
from .fast_paths import ReadyQueue, run_straight, vjp_two_inputs
from .graph import (FREED_MESSAGE, KIND, AccumulateGrad, Node, _anomaly, _building, _clock, _formula, _running,  # noqa: F401
                    anomaly_warning, current_backward)
from .grad_mode import _state as _grad_state
from .grad_mode import enable_grad

# One lock for every write into a .grad: two threads running backward into one shared leaf
# must not lose either's contribution (PyTorch's AccumulateGrad holds a mutex likewise).
_grad_lock = threading.RLock()


class Step:
    """One executed node: what it received, what it sent along each edge, what it wrote."""

    __slots__ = ("index", "node", "grad_outputs", "grad_inputs", "reduced_axes", "accumulated", "hooks",
                 "written_before", "jacobians")

    def __init__(self, index: int, node: Node, grad_outputs: tuple):
        self.index = index
        self.node = node
        self.grad_outputs = grad_outputs   # gradient received, one per output of the node
        self.grad_inputs = ()              # gradient sent per next_functions edge (None: nothing sent)
        self.reduced_axes = ()             # per edge: axes summed to undo broadcasting
        self.accumulated = []              # (tensor, contribution, new total) for each .grad written
        self.hooks = []                    # (output_nr, hook, before, after)
        self.written_before = None         # while listened to: per accumulated entry, the .grad before
        self.jacobians = None              # the node's local Jacobians, when a listener asked for them

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
    axes = broadcast_axes(shape, gshape)
    if axes is None:
        raise ValueError(f"gradient of shape {list(gshape)} cannot be summed to shape {list(shape)}")
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape), axes


def _root_edge(tensor):
    return (tensor.grad_fn, tensor.output_nr) if tensor.grad_fn is not None else (tensor._accumulator(), 0)


def _seeds(tensors, grad_tensors, create_graph: bool):
    Tensor = KIND.tensor
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
    return roots, seeds


def _implicit(grad_tensors, n: int) -> tuple:
    """Per root: whether its seed was made implicitly (no gradient given: a scalar's 1)."""
    if grad_tensors is None:
        return (True,) * n
    if not isinstance(grad_tensors, (list, tuple)):
        return (False,) * n
    return tuple(g is None for g in grad_tensors)


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
            for nxt, _ in node.next_functions:
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
                    if not any(nxt in useful for nxt, _ in t.next_functions)}
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
        for nxt, _ in node.next_functions:
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


class Backward:
    """One backward pass. Iterate it to run one node per step; errors in the arguments
    are raised at construction, before any gradient is touched."""

    def __init__(self, tensors, grad_tensors=None, retain_graph=None, create_graph=False,
                 accumulate=True, only=None, capture=(), targets=None, run_targets=True):
        Tensor = KIND.tensor
        if isinstance(tensors, Tensor):
            tensors = (tensors,)
        tensors = tuple(tensors)
        self.roots, self.seeds = _seeds(tensors, grad_tensors, create_graph)
        self.grad_tensors = grad_tensors
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
        self._straight = False                # run() to the end: no one sees the steps in between
        self._buffers = None                  # gradients received per node (made once running)
        self._ready = ReadyQueue()            # the nodes ready to run (filled once running)
        self._iter = self._run()

    def __iter__(self) -> Iterator[Step]:
        return self._iter

    def __next__(self) -> Step:
        return next(self._iter)

    def upcoming(self):
        """The node the next step will run; None before the first step and once none is ready
        (the next step then finishes the pass). A stepper reads it to keep a run of steps together."""
        return self._ready.first()

    def run(self) -> "Backward":
        """Run every remaining step. Unstarted, unwatched and outside anomaly mode, the loop runs
        as fast_paths.run_straight, the same steps fused into one call."""
        self._straight = True
        if self._buffers is None and not events.listening() and not _anomaly.enabled:
            run_straight(self, node_vjp, Step)
        else:
            deque(self._iter, maxlen=0)
        return self

    # -- the loop: take a ready node, receive its gradients, call its VJP, send them on ------------
    def _run(self) -> Iterator[Step]:
        """micrograd's `for node in reversed(topo): node._backward()`, one node per step: a node
        runs once every consumer has sent it a gradient, and its VJP sends gradients to its inputs.
        A leaf's AccumulateGrad accumulates into `.grad` instead. On an error no .grad is left
        half-updated; between steps (the stepper) the caller's own grad mode holds."""
        self._start()
        ready, buffers, straight, create_graph = self._ready, self._buffers, self._straight, self.create_graph
        watched, capture, listening, halt = self._watched, self.capture, self._listening, self.halt
        index = 0
        state = _grad_state
        outer, inside = state.enabled, True
        state.enabled = create_graph   # hooks and VJPs run in the mode torch gives them
        previous_run, _running.run = _running.run, self
        base = _building.now              # the order of nodes made outside the steps (and after the run)
        try:
            while (node := ready.pop()) is not None:
                grads = buffers.pop(node)   # receive
                hooks = node.hooks
                if create_graph:   # what this step builds (its VJP, the sums of what it sends) is one order up
                    _building.now = node.order + 1
                leaf = type(node) is AccumulateGrad
                step = Step(index, node, tuple(grads)) if watched or hooks is not None or leaf else None
                if hooks is not None or capture:
                    grads = self._receive(node, grads, step)
                if leaf:
                    if self.accumulate and (self.only is None or node in self.only):
                        self._accumulate_leaf(node, grads[0], step)
                elif not (halt and node in halt):   # an input of grad(): its gradient is what was asked
                    self._send(node, self._call_vjp(node, grads, step))
                    if not self.retain_graph:
                        node.free()
                if listening:
                    events.emit(events.NodeExecuted(step, step_info(step)))
                index += 1
                if straight:   # run() to the end: no caller code runs between steps
                    continue
                ready.settle()   # the stepper reads the ready nodes between steps (upcoming())
                state.enabled, inside = outer, False
                _building.now = base
                yield step
                outer, inside = state.enabled, True
                state.enabled = create_graph
        except GeneratorExit:   # a step-by-step run abandoned halfway keeps what it wrote
            raise
        except BaseException:   # an error (or Ctrl-C) midway: no .grad is left half-updated
            self._roll_back()
            raise
        finally:
            _building.now = base
            if inside:
                state.enabled = outer
            _running.run = previous_run
        if self._listening:
            events.emit(events.BackwardFinished(index))

    def _start(self) -> None:
        """The seeds into the roots' buffers; the roots that wait for nothing are ready."""
        self._listening = listening = events.listening()
        # A Step is made for the stepper and for listeners; a straight run that nobody watches
        # makes one only where hooks or a .grad write record into it.
        self._watched = listening or not self._straight
        self._buffers = {}
        self._touched = []   # (tensor, old grad Tensor, old array) to undo on error
        for (node, nr), g in zip(self.roots, self.seeds):
            self._add(self._buffers, node, nr, g)
        for node, _ in self.roots:
            if self.deps.get(node, 0) == 0 and node not in self._ready and \
                    (self.useful is None or node in self.useful):
                self._ready.push(node)
        if listening:
            events.emit(events.BackwardStarted(tuple(self.roots), tuple(self.seeds),
                                               _implicit(self.grad_tensors, len(self.seeds))))

    def _receive(self, node: Node, grads: list, step: Step | None) -> list:
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

    def _call_vjp(self, node: Node, grads: list, step: Step | None) -> tuple:
        """The node's VJP on what it received: one gradient per input edge (post-hooks applied)."""
        g = grads[0] if node.op.n_outputs == 1 else self._multi(node, grads)
        if self._listening and events.jacobians_wanted() and not self.create_graph:
            step.jacobians = local_jacobians(node)
        if _anomaly.enabled:
            sent, axes = _anomaly_vjp(node, g, self.create_graph)
        else:
            sent, axes = node_vjp(node, g, self.create_graph)
        hooks = node.hooks
        if hooks is not None and hooks.post:
            sent = self._run_node_hooks(node, sent, g)
        if step is not None:
            step.grad_inputs = tuple(sent)
            step.reduced_axes = axes
        return sent

    def _send(self, node: Node, sent) -> None:
        """Each gradient into its input node's buffer (summed with any already there); a node
        whose last consumer has now sent becomes ready."""
        buffers, deps, useful = self._buffers, self.deps, self.useful
        for (nxt, nr), g in zip(node.next_functions, sent):
            if nxt is None or (useful is not None and nxt not in useful):
                continue
            if g is not None:
                buf = buffers.get(nxt)
                if buf is None and nxt.op.n_outputs == 1:   # the first gradient to reach nxt: no sum
                    buffers[nxt] = [g]
                else:
                    self._add(buffers, nxt, nr, g)
            remaining = deps[nxt] - 1
            deps[nxt] = remaining
            if remaining == 0:
                if g is None and nxt not in buffers:   # (a gradient sent is in buffers)
                    self._skip(nxt)
                else:
                    self._ready.push(nxt)

    def _accumulate_leaf(self, node: AccumulateGrad, g, step: Step) -> None:
        """.grad += g on the leaf, then its post-accumulate hooks."""
        self._accumulate(node, g, step, self._touched, self._listening)
        hooks = node.hooks
        if hooks is not None and hooks.post:
            for hook in tuple(hooks.post):   # torch calls them with ((), (grad,))
                hook((), (_as_tensor(g),))
        if hooks is not None and hooks.post_accumulate:
            for hook in tuple(hooks.post_accumulate):
                hook(node.variable)

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
        buf = buffers.get(node)
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
            for nxt, _ in n.next_functions:
                if nxt is None or (self.useful is not None and nxt not in self.useful):
                    continue
                self.deps[nxt] -= 1
                if self.deps[nxt] == 0:
                    if nxt in self._buffers:
                        self._ready.push(nxt)
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
        Tensor = KIND.tensor
        grads = list(grads)
        for nr, hooks in node.hooks.tensor.items():
            for hook in tuple(hooks):
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
        for hook in tuple(node.hooks.pre):
            result = hook(tuple(_as_tensor(g) for g in grads))
            if result is not None:
                grads = [_unwrap(r, self.create_graph) for r in result]
            step.hooks.append((None, hook, None, result))
        return grads

    def _run_node_hooks(self, node: Node, sent: list, g) -> list:
        outs = g if isinstance(g, tuple) else (g,)
        for hook in tuple(node.hooks.post):
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
        Tensor = KIND.tensor
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
                        tensor._grad = KIND.apply(COPY, (blank, g))
                    else:
                        tensor._grad = g.clone()
        elif old is None:
            tensor._grad = Tensor._make(g if self._unshared(g) else g.copy())
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
    if node.saved is not None:   # saved-tensor hooks: the VJP reads what unpack gives back
        saved_inputs, saved_out = node.unpacked()
    if create_graph:
        TENSOR = KIND.namespace
        outs = node.output(0) if op.n_outputs == 1 else tuple(node.output(i) for i in range(op.n_outputs))
        if saved_out is not node.out_data and op.n_outputs == 1:
            Tensor = KIND.tensor
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
        if type(rule) is tuple and len(rule) == 2 and len(saved_inputs) == 2:
            raw, axes = vjp_two_inputs(node, rule, xp, g, out, saved_inputs)
            if axes is not None:
                return raw, axes   # both already fit their inputs: nothing to sum or cast
        else:
            raw = _call_rule(rule, node, xp, g, out, [t._data for t in saved_inputs])
    inputs, edges = node.inputs, node.next_functions
    axes = None   # made only when a gradient is summed to undo broadcasting
    for i, gi in enumerate(raw):
        if gi is None:
            continue
        a = inputs[i]._data   # the input's shape and dtype are what its gradient must have
        if edges[i][0] is None or gi.shape != a.shape or gi.dtype is not a.dtype:
            if axes is None:
                raw, axes = list(raw), [()] * len(raw)
            raw[i], axes[i] = _fit(gi, a, i, edges[i][0] is None, op, create_graph)
    if axes is None:
        return raw if type(raw) is tuple else tuple(raw), ((),) * len(raw)
    return tuple(raw), tuple(axes)



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
            TENSOR = KIND.namespace
            gi = TENSOR.astype(gi, a.dtype)
    elif gi.dtype != a.dtype:
        gi = gi.astype(a.dtype)
    return gi, summed


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


def step_info(step: Step) -> StepRecord:
    """A Step in plain values (Previews taken now): what NodeExecuted carries to recorders."""
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
    jacobians = None if step.jacobians is None else tuple(step.jacobians)
    return StepRecord(grad_in=tuple(preview(g) for g in step.grad_outputs), accumulations=accs, hooks=hooks,
                      jacobians=jacobians, key=step.node.id, sent=tuple(sent))


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


def _call_rule(rule, node: Node, xp, g, out, args) -> list:
    """A rule is one function returning every input's gradient, or a tuple of one function
    per input (None: not differentiable); those run only for inputs that need a gradient."""
    if type(rule) is not tuple:
        return rule(xp, g, out, *args, *node.params)
    return [None if f is None or edge[0] is None else f(xp, g, out, *args, *node.params)
            for f, edge in zip(rule, node.next_functions)]


def _zeros_like_output(node: Node, i: int, create_graph: bool):
    data = node.output_data()[i]
    z = namespace(data).zeros_like(data)
    if create_graph:
        Tensor = KIND.tensor
        return Tensor._make(z)
    return z


def _check_hook_result(hook, before, after) -> None:
    """PyTorch's checks on what a tensor hook returned."""
    Tensor = KIND.tensor
    if not isinstance(after, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(after).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if tuple(after.shape) != tuple(before.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if after._data.dtype != before._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {before.type()} got {after.type()})")


def _as_tensor(g):
    Tensor = KIND.tensor
    return None if g is None or isinstance(g, Tensor) else Tensor._make(g)


def _unwrap(g, create_graph: bool):
    if g is None or create_graph:
        return g
    return g._data


def backward_steps(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> Backward:
    """Start a backward pass and return it unstarted: each next() runs one node and returns its Step."""
    only, capture = None, ()
    if inputs is not None:
        Tensor = KIND.tensor
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


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """torch.autograd.backward: accumulate d(tensors)/d(leaves) into the leaves' .grad."""
    run = backward_steps(tensors, grad_tensors, retain_graph, create_graph, inputs)
    run.run()
    for t, g in zip(getattr(run, "_nonleaf_inputs", ()), run.captured):
        if g is not None:
            Tensor = KIND.tensor
            gt = g if isinstance(g, Tensor) else Tensor._make(g.copy())
            t._grad = gt if t._grad is None else t._grad + gt


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False) -> tuple:
    """torch.autograd.grad: the gradients of `outputs` w.r.t. `inputs`, without touching .grad."""
    Tensor = KIND.tensor
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    capture = [_root_edge(t) for t in inputs]
    run = Backward(outputs, grad_outputs, retain_graph, create_graph, accumulate=False, capture=capture,
                   targets={node for node, _ in capture}, run_targets=False).run()
    result = []
    for i, (t, g) in enumerate(zip(inputs, run.captured)):
        if g is None:
            if materialize_grads:
                g = namespace(t._data).zeros_like(t._data)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        result.append(None if g is None else (g if isinstance(g, Tensor) else Tensor._make(g)))
    return tuple(result)
