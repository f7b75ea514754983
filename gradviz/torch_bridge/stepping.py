"""torch's own backward, one node at a time: `record_torch` returns a Recording whose step()
runs one node of torch's engine.

Stepped, torch.autograd.backward runs on a worker thread. Every node of the graph gets a pre
hook, which hands the node about to run to the caller's thread and waits there for the word to go
on, and a post hook, which keeps what the node did (the gradient it received, the gradient it sent
along each edge, the `.grad` it wrote) for its StepRecord. So between two steps torch's engine is
really stopped halfway: a parameter's `.grad` read then is the partly accumulated gradient
torch holds at that point. The caller's thread alone touches the Trace; the worker only sends
it raw steps and errors (a freed graph's RuntimeError is raised where step() was called).
Closing, resetting or dropping the Recording stops the worker by raising out of the hook it
waits in, removes every hook and puts each `.grad` back.

Run through from the start (`run()` before any step), the backward runs on the caller's thread
with post hooks alone, and the Trace (a LazyTrace) is made when a view first reads it: the
recording costs torch's run, a hook per node and what the graph may not keep (origin.freeze).
Its gradients are previewed when a view reads them, or, recorded for a view that reads them all
(`eager`: animate), inside the hooks while torch's cache still holds them.
"""
from __future__ import annotations

import atexit
import math
import queue
import threading
import weakref

from ..autograd.engine import broadcast_axes
from ..events import NodeExecuted
from ..records import Accumulation, StepRecord
from ..tracing import LazyTrace, Recorder, Trace
from ..tracing.recording import Recording
from .graph import creation_order, root_node
from .jacobians import torch_jacobians
from .names import Naming
from .origin import Origin, op_table
from .previews import Previews, Taken, preview
from .support import flatten, is_accumulate, node_name, torch_module
from .unroll import unrolled

_LIVE: "weakref.WeakSet" = weakref.WeakSet()   # sessions with a worker, stopped at exit


class _Stopped(Exception):
    """Raised inside torch's backward, out of the hook a worker waits in, to end it early."""


def _flow_axes(op, slot: int, out_shape, in_shape: tuple) -> tuple:
    """Axes of the node's output gradient summed to give the input's (smaller) shape, by the
    engine's rule, for the input slots the op record declares as broadcasting."""
    if op is None or out_shape is None or (op.broadcasts is not None and slot not in op.broadcasts):
        return ()
    if math.prod(in_shape) >= math.prod(out_shape):
        return ()
    return broadcast_axes(in_shape, out_shape) or ()


class GradState:
    """.grad of the tensors a backward may write, put back exactly: the same tensor objects with
    the same values and version counters."""

    def __init__(self, tensors):
        self.saved = [(t, t.grad, None if t.grad is None else t.grad.detach().clone(),
                       None if t.grad is None else t.grad._version) for t in tensors]

    def before(self, tensor):
        """The value .grad had when the state was taken (a copy), or None."""
        return next((value for t, _, value, _ in self.saved if t is tensor), None)

    def restore(self) -> None:
        torch = torch_module()
        with torch.no_grad():
            for t, grad, value, version in self.saved:
                if grad is not None:
                    grad.copy_(value)
                    _set_version(grad, version)
                t.grad = grad


def _set_version(tensor, version: int) -> None:
    """Put a restored .grad's version counter back (torch's accumulation and the copy bumped it;
    its values are the old ones again). Where torch lacks the setter, the version stays bumped."""
    setter = getattr(torch_module()._C._autograd, "_unsafe_set_version_counter", None)
    if setter is None:
        return
    try:
        setter((tensor,), (version,))
    except TypeError:   # older torch: one tensor and one int
        setter(tensor, version)


def written(roots, order, names: dict, inputs=None) -> list:
    """Every tensor a backward from `roots` may write .grad into that the bridge can see: the
    leaves, the roots and named tensors that retain_grad(), and backward's `inputs` (a non-leaf among
    them gets a .grad). A retained non-leaf it is not given cannot be found from torch's graph, so its
    .grad is not put back."""
    found = {id(fn.variable): fn.variable for fn in order if is_accumulate(fn)}
    for t in (*roots, *names.values()):
        if getattr(t, "is_leaf", False) or getattr(t, "retains_grad", False):
            found[id(t)] = t
    for t in inputs or ():
        if hasattr(t, "grad"):   # a tensor (torch also takes a GradientEdge, which holds no .grad)
            found[id(t)] = t
    return list(found.values())


class _Hooks:
    """The hooks on every node of one graph. Each post hook keeps what torch alone can tell as the
    node runs, a raw step (`_Steps.record` makes its StepRecord): the gradients torch handed it and
    their version counters, and what must be read now (a .grad about to be added to, a retained
    output's .grad, the local Jacobians). take: where given (Taken.all), the gradients are handed
    on as their previews, taken now, instead of the tensors."""

    def __init__(self, origin: Origin, roots: tuple, grads: GradState, send, wait, stopping,
                 jacobians: bool = False, paused: bool = True, take=None):
        self.jacobians = jacobians
        self.take = take
        self.grads = grads
        self.send, self.wait, self.stopping = send, wait, stopping
        self.before: dict = {}
        self.totals: dict = {}
        self.retained: dict = {}   # outputs that retain_grad(): torch writes their .grad at their grad_fn
        for t in roots:
            if t.grad_fn is not None and t.retains_grad:
                self.retained.setdefault(t.grad_fn, []).append(t)
        self.task = None   # the id of the engine's run these hooks belong to, seen at their first call
        self.handles = []
        for fn in origin.post:
            accumulate = is_accumulate(fn)
            # a backward run through without pausing needs a pre hook only where torch is about to add
            # to a .grad (where there is none, it writes the gradient it received)
            if paused or accumulate and fn.variable.grad is not None:
                self.handles.append(fn.register_prehook(self._pre(fn, accumulate)))
            self.handles.append(fn.register_hook(self._post(fn, accumulate)))

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def _ours(self) -> bool:
        """Whether the engine's run calling a hook is the one these hooks record: another backward over
        the same nodes (a stepper left paused, then animate() or loss.backward() on the same loss)
        passes through them untouched instead of waiting on this recording."""
        task = torch_module()._C._current_graph_task_id()
        if self.task is None:   # the first hook called runs this recording's backward
            self.task = task
        return task == self.task

    def _pre(self, fn, accumulate: bool):
        def hook(grad_outputs):
            if not self._ours():
                return
            if accumulate:   # taken now: torch is about to add to this .grad in place
                self.before[fn] = preview(fn.variable.grad)
            self.wait(fn)
        return hook

    def _post(self, fn, accumulate: bool):
        retained = self.retained.get(fn)
        send, stopping, ours, take = self.send, self.stopping, self._ours, self.take
        if not (accumulate or retained or self.jacobians):   # most nodes: nothing to read now but the gradients
            def hook(grad_inputs, grad_outputs):
                if not ours():
                    return
                send(_raw(fn, grad_inputs, grad_outputs, None, take))
                if stopping():   # closed while running through: end the backward here
                    raise _Stopped
            return hook

        def hook_now(grad_inputs, grad_outputs):
            if not ours():
                return
            send(_raw(fn, grad_inputs, grad_outputs, self._now(fn, accumulate, retained, grad_outputs), take))
            if stopping():
                raise _Stopped
        return hook_now

    def _now(self, fn, accumulate: bool, retained, grad_outputs) -> tuple:
        """(the leaf's .grad before and after, or None; (output_nr, total, before) of each retained
        output; the local Jacobians): what a later read would find changed."""
        leaf = None
        if accumulate and grad_outputs[0] is not None:
            # into a .grad that was None torch writes the gradient it received (the tensor itself, or a
            # copy where another holds it), so its preview is the total's too, unless a hook on the
            # tensor may have changed .grad since
            before = self.before.pop(fn, None)
            hooked = getattr(fn.variable, "_post_accumulate_grad_hooks", None)
            leaf = (before, None if before is None and not hooked else preview(fn.variable.grad))
        kept = []
        for t in retained or ():
            if grad_outputs[t.output_nr] is not None:
                total = preview(t.grad)   # taken now: a later backward adds to it in place
                kept.append((t.output_nr, total, self.totals.get(id(t), preview(self.grads.before(t)))))
                self.totals[id(t)] = total
        return leaf, tuple(kept), torch_jacobians(fn) if self.jacobians else None


def _raw(fn, grad_inputs, grad_outputs, now, take) -> tuple:
    """A raw step: the gradients with their version counters (previewed later, lazily), or, with
    `take`, their previews taken now (versions None)."""
    if take is not None:
        return fn, take(grad_inputs), take(grad_outputs), None, None, now
    return fn, grad_inputs, grad_outputs, _versions(grad_inputs), _versions(grad_outputs), now


def _versions(grads) -> list:
    return [None if g is None else g._version for g in grads]


class _Steps:
    """Raw steps (from the hooks) -> StepRecords, each gradient previewed once and lazily, as it
    was when torch handed it over."""

    def __init__(self, origin: Origin):
        self.origin = origin
        self.table = op_table()
        self.previews = Previews()

    def record(self, raw) -> StepRecord:
        fn, grad_inputs, grad_outputs, in_versions, out_versions, now = raw
        op, key = self.table.get(node_name(fn)), self.origin.keys[fn]
        if in_versions is not None:   # tensors, previewed now (lazily): else previews taken in the hook
            look = self.previews.of
            grad_inputs = tuple(None if g is None else look(g, version=v) for g, v in zip(grad_inputs, in_versions))
            grad_outputs = tuple(look(g, version=v) for g, v in zip(grad_outputs, out_versions))
        out_shape = tuple(grad_outputs[0].shape) if len(grad_outputs) == 1 and grad_outputs[0] is not None else None
        sent = tuple((slot, g, _flow_axes(op, slot, out_shape, tuple(g.shape)))
                     for slot, g in enumerate(grad_inputs) if g is not None)
        grad_in = grad_outputs
        accumulations, jacobians = [], None
        if now is not None:
            leaf, kept, jacobians = now
            if leaf is not None:
                before, total = leaf
                accumulations.append(Accumulation(contribution=grad_in[0], total=grad_in[0] if total is None else total,
                                                  before=before, target=("leaf", key)))
            for nr, total, before in kept:
                accumulations.append(Accumulation(contribution=grad_in[nr], total=total, before=before,
                                                  target=("output", key, nr)))
        return StepRecord(grad_in=grad_in, accumulations=tuple(accumulations), key=key, sent=sent,
                          jacobians=jacobians)


class _Worker:
    """One run of torch's backward (`run_pass`) on a thread of its own, waiting in the nodes' pre hooks.

    inbox (caller -> worker): "go" (run the node waited at), "run" (run to the end without
    waiting), "stop". outbox (worker -> caller): ("paused", node key), ("step", StepRecord),
    ("done", None), ("stopped", None), ("error", the exception torch raised)."""

    def __init__(self, run_pass, free: bool):
        self.inbox: queue.Queue = queue.Queue()
        self.outbox: queue.Queue = queue.Queue()
        self.backlog: list = []   # steps run without waiting, handed over in one go at the end
        self.free = free
        self.stopping = False
        self.run_pass = run_pass
        self.thread = threading.Thread(target=self._main, daemon=True, name="gradviz torch backward")

    def send(self, raw) -> None:
        """A raw step, on the worker thread: to the caller now when it waits for it, else kept for the
        end (waking the caller's thread for every node would cost more than the node)."""
        if self.free:
            self.backlog.append(raw)
        else:
            self.outbox.put(("step", raw))

    def wait(self, key) -> None:
        """In a node's pre hook, on the worker thread: hand the node over and wait for the word."""
        if self.stopping:
            raise _Stopped
        if self.free:
            return
        self.outbox.put(("paused", key))
        word = self.inbox.get()
        if word == "stop":
            raise _Stopped
        if word == "run":
            self.free = True

    def _main(self) -> None:
        run_pass, self.run_pass = self.run_pass, None
        try:
            run_pass()
        except _Stopped:
            self.outbox.put(("stopped", None))
        except BaseException as exc:   # torch's own error, raised again on the caller's thread
            self.outbox.put(("error", exc))
        else:
            self.outbox.put(("done", None))

    def stop(self) -> None:
        """End the backward where it stands (from any thread but the worker's) and wait for the thread."""
        self.stopping = True
        if self.thread.is_alive():
            self.inbox.put("stop")
            self.thread.join()


class _Session:
    """What one Recording holds of torch: the graph, the hooks on it, the worker, the .grad to put
    back. Never the Recording itself, so dropping the Recording closes the session."""

    def __init__(self, origin: Origin, roots: tuple, gradient, retain_graph: bool, write_grads: bool,
                 jacobians: bool = False, eager: bool = False, inputs: tuple | None = None, accumulate: bool = True):
        self.origin, self.roots, self.gradient, self.retain_graph = origin, roots, gradient, retain_graph
        self.inputs, self.accumulate = inputs, accumulate
        self.jacobians, self.eager = jacobians, eager
        self.write_grads = write_grads
        self.grads = GradState(written(roots, origin.post, origin.naming.tensors, inputs if accumulate else None))
        self.leaves = {fn: fn.variable for fn in origin.post if is_accumulate(fn)}
        self.worker: _Worker | None = None
        self.hooks: _Hooks | None = None
        self.closed = False

    def run_pass(self) -> None:
        """torch's pass: autograd.backward (into `inputs` alone, where given), or with accumulate=False
        autograd.grad's, which runs the same nodes but writes no .grad (its result is not needed here)."""
        autograd = torch_module().autograd
        if self.accumulate:
            autograd.backward(self.roots, grad_tensors=self.gradient, retain_graph=self.retain_graph,
                              inputs=self.inputs)
        else:
            autograd.grad(self.roots, self.inputs, self.gradient, retain_graph=self.retain_graph, allow_unused=True)

    def start(self, free: bool) -> None:
        self.worker = _Worker(self.run_pass, free)
        worker = self.worker
        self.hooks = _Hooks(self.origin, self.roots, self.grads, worker.send, worker.wait, lambda: worker.stopping,
                            self.jacobians, paused=not free)
        _LIVE.add(self)
        self.worker.thread.start()

    def receive(self):
        return self.worker.outbox.get()

    def run_through(self, tick=None) -> tuple:
        """The whole backward on this thread, never paused (no worker to start and wake for each node):
        (the raw steps in the order torch ran their nodes, then ("done", None) or ("error", torch's
        exception)). tick: called as each node has run (a progress bar's update)."""
        backlog: list = []
        send = backlog.append if tick is None else (lambda raw: (backlog.append(raw), tick()))
        self.hooks = _Hooks(self.origin, self.roots, self.grads, send, _go_on, _never, self.jacobians,
                            paused=False, take=Taken().all if self.eager else None)
        try:
            self.run_pass()
        except Exception as exc:   # torch's own error, raised once the steps before it are recorded
            return backlog, ("error", exc)
        finally:
            self.hooks.remove()
            self.hooks = None
        return backlog, ("done", None)

    def stop(self) -> None:
        """Stop the worker, remove the hooks: torch's graph as it was before recording began."""
        worker, self.worker = self.worker, None
        if worker is not None:
            if threading.current_thread() is worker.thread:   # dropped by a collection on the worker itself
                worker.stopping = True
            else:
                worker.stop()
        if self.hooks is not None:
            self.hooks.remove()
            self.hooks = None
        _LIVE.discard(self)

    def close(self, restore: bool | None = None) -> None:
        if self.closed:
            return
        self.stop()
        if (not self.write_grads) if restore is None else restore:
            self.grads.restore()
        self.closed = True
        self.origin = self.roots = self.gradient = self.grads = self.inputs = None
        self.leaves = {}


def _go_on(fn) -> None:
    """A run-through's wait before a node: none."""


def _never() -> bool:
    return False


@atexit.register
def _stop_all() -> None:
    for session in list(_LIVE):
        session.close()


class TorchRecording(Recording):
    """A torch backward being recorded: the Trace of the graph (complete before any step runs),
    then its steps, one node of torch's engine per step(). Also a context manager (closes on exit).

    `upcoming()` is the Trace id of the node torch's engine waits to run; `step()` runs it and
    returns its StepRecord; `run()` runs the rest, closes and returns the Trace; `reset()` puts
    .grad back and starts a fresh backward over the same graph; `close()` stops the engine where
    it stands, removes the hooks and puts .grad back (unless write_grads); `grads_now()` is
    each leaf's `.grad` as torch's engine has left it right now.
    """

    def __init__(self, session: _Session, recorder: Recorder, origin: Origin, show_saved: bool):
        # Recording.__init__ would read the Trace's leaves: here the Trace is made when first read
        # (a LazyTrace), so a backward run through costs torch's run and its hooks, and a view the rest
        self._session = session
        self._recorder = recorder
        self._steps = _Steps(origin)
        self._pending: list = []   # raw steps that ran before the Trace was made
        self.trace = LazyTrace(_maker(origin, recorder, show_saved, self._steps, self._pending))
        self.finished = False
        self._grads_at_start: dict = {}
        self._leaf_ids: dict | None = None   # leaf node -> Trace id, read with the Trace (_read_leaves)
        self._upcoming = None
        self._finalizer = weakref.finalize(self, session.close)

    # -- the interface every Recording has -------------------------------------------------------
    def upcoming(self) -> str | None:
        if not self._begin():
            return None
        return self._recorder.trace_id(self._upcoming)

    def step(self):
        if not self._begin():
            return None
        self._session.worker.inbox.put("go")
        self._take(self._session.receive())
        self._take(self._session.receive())   # the next node waited at, or the end
        return self.trace.steps[-1]

    def run(self, tick=None) -> Trace:
        try:
            if not self.finished and not self._session.closed:
                if self._session.worker is None:
                    backlog, final = self._session.run_through(tick)
                else:
                    self._session.worker.inbox.put("run")
                    worker = self._session.worker
                    final = self._session.receive()   # done, or torch's error: every step before it is in the backlog
                    backlog = worker.backlog
                    for _ in backlog if tick is not None else ():
                        tick()
                if self.trace.built():
                    for raw in backlog:
                        self._take(("step", raw))
                else:   # made into StepRecords with the Trace, when a view first reads it
                    self._pending.extend(backlog)
                self._take(final)
        finally:
            self.close()
        return self.trace

    def _restart(self) -> None:
        if self._session.closed:
            raise RuntimeError("this recording is closed; record the backward again")
        self._session.stop()
        self._session.grads.restore()
        self._recorder.step_infos.clear()
        self._pending.clear()
        self.finished = False
        self._upcoming = None

    def close(self) -> None:
        self._finalizer()

    def grads_now(self) -> dict:
        if not self._session.closed:
            self._read_leaves()
        ids = self._leaf_ids or {}
        return {ids[fn]: preview(t.grad) for fn, t in self._session.leaves.items() if ids.get(fn) is not None}

    def _read_leaves(self) -> None:
        """Make the Trace (once), and read what a stepper needs of it: each leaf's Trace id, and its
        .grad before the first step (reset puts them back)."""
        if self._leaf_ids is not None:
            return
        origin = self._session.origin
        self._grads_at_start = {n.id: n.grad for n in self.trace.nodes if n.kind == "leaf"}
        self._leaf_ids = {fn: self._recorder.tensor_node(("leaf", origin.keys[fn])) for fn in self._session.leaves}

    # -- the worker's messages ------------------------------------------------------------------
    def _begin(self) -> bool:
        """Start torch's backward, paused, if it has not started; False once it is over (or closed).
        A stepper shows the graph before the first step: the Trace is made now."""
        if self.finished or self._session.closed:
            return False
        if self._session.worker is None:
            self._read_leaves()
            self._session.start(free=False)
            self._take(self._session.receive())
        return not self.finished

    def _take(self, message) -> None:
        kind, value = message
        if kind == "paused":
            self._upcoming = self._steps.origin.keys[value]
        elif kind == "step":
            if self.trace.built():
                self._recorder.feed(NodeExecuted(None, self._steps.record(value)))
            else:   # made into StepRecords with the Trace, when a view first reads it
                self._pending.append(value)
        elif kind == "done":
            self.finished, self._upcoming = True, None
            self._session.stop()
        else:   # "error": torch's own exception, raised here, with .grad put back
            self.finished, self._upcoming = True, None
            self.close()
            raise value


def _maker(origin: Origin, recorder: Recorder, show_saved: bool, steps: _Steps, pending: list):
    """How a recording's LazyTrace is made: the graph's NodeRecords (from the frozen origin), the
    Trace of them, then the steps that ran before. (It holds no Recording: dropping the Recording
    must close its session while the Trace lives on.)"""
    def make(trace: Trace) -> None:
        origin.replay(recorder)
        recorder.trace(origin.outputs(), show_saved, into=trace)
        for raw in pending:
            recorder.feed(NodeExecuted(None, steps.record(raw)))
        pending.clear()
    return make


def _check_roots(roots: tuple) -> None:
    for i, t in enumerate(roots):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def record_torch(roots, gradient=None, names: dict | None = None, model=None, caller: dict | None = None,
                 retain_graph: bool = True, jacobians: bool = False, show_saved: bool = False,
                 write_grads: bool = False, forward=None, unroll: bool = False,
                 eager: bool = False, inputs=None, accumulate: bool = True) -> TorchRecording:
    """A Recording of torch's backward from `roots` (a tensor or a sequence of them), run one node
    of torch's own engine per step().

    gradient: torch.autograd.backward's grad_tensors. names: name -> tensor; model: an nn.Module
    whose parameters name the leaves and whose submodules cluster the nodes that read them;
    caller: a namespace (the calling frame's variables) whose modules and tensors name the same
    way; forward: a `record_forward` record, for every node's module and value. retain_graph as
    torch's (the default keeps the graph, so a later backward works); write_grads=True leaves the
    .grad the recorded backward wrote, as `.backward()` would. jacobians: each step's local Jacobian,
    read row by row from the node's own backward (jacobians.py), for nodes of up to 64 elements a side.
    unroll=True: a fused recurrent node (nn.LSTM's MkldnnRnnLayerBackward0) recorded cell by cell and
    step by step instead, from the gradient it received (see unroll.py); ValueError where there is none.
    eager=True: run through from the start (`run()` before any step), each gradient is previewed
    whole as torch hands it over, for a view that shows every value (animate); by default a value is
    read when a view first asks for it, so a recording never looked at costs no reading.
    inputs: as torch.autograd.backward's (only the nodes leading to them run, only they get a .grad);
    accumulate=False: torch.autograd.grad's pass over the same nodes, which writes no .grad.
    """
    roots = flatten(roots if isinstance(roots, (list, tuple)) else (roots,))
    _check_roots(roots)
    if inputs is not None:
        torch = torch_module()   # one tensor or edge, or a sequence of them, as torch's backward and grad read it
        inputs = (inputs,) if isinstance(inputs, (torch.Tensor, torch.autograd.graph.GradientEdge)) else tuple(inputs)
        if unroll:
            raise ValueError("unroll=True records the whole backward from the fused node: it takes no inputs")
    naming = Naming.of(names, model, caller)
    if unroll:
        order = creation_order([root_node(t) for t in roots])
        loss, forward = unrolled(roots, gradient, order, naming, GradState(written(roots, order, naming.tensors)))
        roots, gradient = (loss,), None
        naming.add({"L": loss})
    origin = Origin(roots, naming, show_saved, forward)
    origin.freeze()
    recorder = Recorder()
    recorder.implicit_seed = gradient is None or (isinstance(gradient, (list, tuple))
                                                  and all(g is None for g in gradient))
    return TorchRecording(_Session(origin, roots, gradient, retain_graph, write_grads, jacobians, eager, inputs,
                                   accumulate), recorder, origin, show_saved)


def record_torch_backward(*tensors, gradient=None, params: dict | None = None, retain_graph: bool = True,
                          show_saved: bool = False, forward=None, model=None, caller: dict | None = None,
                          write_grads: bool = False) -> Trace:
    """Run torch's backward over `tensors` and return the Trace with one step per executed node:
    `record_torch(...).run()`. Afterwards every `.grad` is as it was before (unless write_grads)
    and, with retain_graph (the default), the graph can still be backpropagated."""
    return record_torch(tensors, gradient=gradient, names=params, model=model, caller=caller,
                        retain_graph=retain_graph, show_saved=show_saved, write_grads=write_grads,
                        forward=forward).run()
