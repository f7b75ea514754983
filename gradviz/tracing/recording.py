"""Driving a backward under a Recorder: a Recording yields the Trace of the graph, then its steps.

The one home of "record a backward without changing .grad": `Recording` is the interface every view
reads a backward through (the player, the Stepper, the race, the CLI); `EngineRecording` drives
gradviz's own engine one node at a time; the torch bridge subclasses Recording for torch's engine.
Which of them records a given input is decided once, by `origins.record`.
"""
from __future__ import annotations

from ..autograd.engine import backward_steps, grad_steps
from ..autograd.graph import node_order
from ..records import StepRecord
from .recorder import Recorder
from .replay import collect, outputs_of, replay
from .trace import Trace


class Recording:
    """A backward being recorded: the Trace of the graph (complete before any step runs), then its steps.

    `trace.steps` grows as `step()` runs nodes; `run()` runs the rest and closes. This base class has
    nothing left to run: its Trace is complete. Origins subclass it and override `upcoming`, `_next`,
    `_restart` and `close`: gradviz's engine (EngineRecording), torch's (the torch bridge's), a Trace
    recorded before (ReplayRecording). A context manager: leaving the block closes it.
    """

    def __init__(self, trace: Trace, finished: bool = True):
        self.trace = trace
        self.finished = finished
        # .grad of the leaves as the Trace had them before the first step (the steps record the rest)
        self._grads_at_start = {n.id: n.grad for n in trace.nodes if n.kind == "leaf"}

    def upcoming(self) -> str | None:
        """The Trace id of the node that runs next; None when finished or when no node is ready yet."""
        return None

    def step(self) -> StepRecord | None:
        """Run one node of the backward and return its StepRecord (None once the backward has finished)."""
        while not self.finished:
            count = len(self.trace.steps)
            self._next()
            if len(self.trace.steps) > count:
                return self.trace.steps[-1]
        return None

    def run(self, tick=None) -> Trace:
        """Run the backward to its end, close the recording and return the Trace. tick: called once
        for each step run (a progress bar's update)."""
        try:
            while not self.finished:
                count = len(self.trace.steps)
                self._next()
                if tick is not None and len(self.trace.steps) > count:
                    tick()
        finally:
            self.close()
        return self.trace

    def reset(self) -> None:
        """.grad back exactly as at the start, and a fresh backward over the same graph."""
        self._restart()
        self.trace.steps.clear()
        for node in self.trace.nodes:
            if node.id in self._grads_at_start:
                node.grad = self._grads_at_start[node.id]

    def close(self) -> None:
        """.grad back as at the start (unless the recording writes them); nothing of the run kept alive."""

    def grads_now(self) -> dict:
        """Leaf Trace id -> Preview of its .grad as the backward has left it right now (None: no .grad)."""
        grads = dict(self._grads_at_start)
        for step in self.trace.steps:
            for acc in step.accumulations:
                if acc.node in grads:
                    grads[acc.node] = acc.total
        return grads

    def _next(self) -> None:
        """Run one node (or finish the pass, setting `finished`); a finished Trace has none to run."""
        self.finished = True

    def _restart(self) -> None:
        """Start the backward again from its first node."""
        if self.trace.steps:
            raise RuntimeError("this recording holds a Trace only: there is no backward to run again")

    def __enter__(self) -> "Recording":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def __repr__(self) -> str:
        state = "finished" if self.finished else "running"
        return f"<gradviz.{type(self).__name__}: {len(self.trace.steps)} steps over {len(self.trace.nodes)} nodes, {state}>"


class ReplayRecording(Recording):
    """A Trace recorded before (a saved run, a Trace from JSON) as a Recording: the graph first, then its
    recorded steps handed out again one at a time, as they ran. Nothing runs and no .grad is touched;
    the steps are appended to a copy of the Trace, whose leaves start with the .grad they had before
    the run."""

    def __init__(self, recorded: Trace):
        graph = Trace.from_json(recorded.to_json())   # a copy to append to: the given Trace stays whole
        self._recorded, graph.steps = graph.steps, []
        self._nodes = {n.id: n for n in graph.nodes}
        for step in reversed(self._recorded):   # a leaf's .grad before its first write
            for acc in step.accumulations:
                if acc.node in self._nodes:
                    self._nodes[acc.node].grad = acc.before
        super().__init__(graph, finished=not self._recorded)

    def upcoming(self) -> str | None:
        return None if self.finished else self._recorded[len(self.trace.steps)].node

    def _next(self) -> None:
        step = self._recorded[len(self.trace.steps)]
        for acc in step.accumulations:
            if acc.node in self._nodes:
                self._nodes[acc.node].grad = acc.total
        self.trace.steps.append(step)
        self.finished = len(self.trace.steps) == len(self._recorded)

    def _restart(self) -> None:
        self.finished = not self._recorded


class EngineRecording(Recording):
    """gradviz's own backward over `roots`, driven one node at a time under a Recorder.

    The Trace of the graph is built (replayed) before any step runs. Each step runs one node of the
    engine's `backward_steps` with the Recorder listening, so `x.grad` between steps is exactly what
    has been accumulated so far. `close()` puts every .grad (leaves and retained non-leaves) back as
    it was, the same objects with the same values and version (write_grads=True keeps what the
    backward wrote, as `.backward()` would); retain_graph=False frees the graph as `.backward()` does.
    Hooks run during the recorded backward (the Trace shows them) and stay registered. inputs: as
    backward's, only these get a .grad; with accumulate=False the pass is autograd.grad's instead.
    """

    def __init__(self, roots, gradient=None, names=None, retain_graph: bool = True, jacobians: bool = False,
                 show_saved: bool = False, write_grads: bool = False, order_of=node_order, inputs=None,
                 accumulate: bool = True):
        self.roots = tuple(roots)
        self.gradient = gradient
        self.retain_graph = retain_graph
        self.inputs, self.accumulate = inputs, accumulate
        self.write_grads = write_grads
        self.recorder = Recorder(jacobians=jacobians)
        live = replay(self.roots, self.recorder, names, order_of)   # a create_graph gradient's own graph: order 1
        super().__init__(self.recorder.trace(outputs_of(self.roots, names), show_saved), finished=False)
        self._snapshot = GradSnapshot(written_tensors(self.roots, live))
        # made now, run later: a bad gradient is refused here, before any .grad is touched
        self._backward = self._pass()

    def _pass(self):
        """The engine's pass, unstarted: backward's (into `inputs` alone, where given), or, with
        accumulate=False, autograd.grad's (no .grad written: the gradients stop at `inputs`)."""
        if not self.accumulate:
            return grad_steps(self.roots, self.inputs, self.gradient, retain_graph=self.retain_graph)
        return backward_steps(self.roots, self.gradient, retain_graph=self.retain_graph, inputs=self.inputs)

    def upcoming(self) -> str | None:
        node = None if self._backward is None or self.finished else self._backward.upcoming()
        return None if node is None else self.recorder.trace_id(node.id)

    def _next(self) -> None:
        steps = len(self.trace.steps)
        try:
            with self.recorder:   # listening on this thread only while a node runs: the step joins the Trace
                # a grad() input's node is passed by, not run: one step is the next node that runs
                while len(self.trace.steps) == steps:
                    next(self._backward)
                    if self._backward.upcoming() is None:   # nothing is ready: the last node has run
                        next(self._backward)
        except StopIteration:
            self.finished = True
            self._backward = None
        except BaseException:   # the engine undid the step's writes; the pass is over
            self.finished = True
            self._backward = None
            raise

    def run(self, tick=None) -> Trace:
        if tick is not None:   # the engine's own run reports no steps: one at a time, each counted
            return super().run(tick)
        try:
            if not self.finished:
                with self.recorder:
                    self._backward.run()
                self.finished = True
        finally:
            self.close()
        return self.trace

    def _restart(self) -> None:
        if self.roots is None:
            raise RuntimeError("this recording was closed: record the tensors again to run their backward")
        self._snapshot.restore()
        self.recorder.step_infos.clear()
        self._backward = self._pass()
        self.finished = False

    def close(self) -> None:
        if self.roots is None:
            return
        self._backward = None   # a pass abandoned halfway keeps what it wrote until the snapshot is restored
        if not self.write_grads:
            self._snapshot.restore()   # recording changes no .grad the user can see
        self.finished = True
        self.roots = self.gradient = self._snapshot = None


class GradSnapshot:
    """.grad of the given tensors, put back exactly: the same Tensor objects, the same values and
    the same version (accumulating bumps a .grad's version; its old data is valid again)."""

    def __init__(self, tensors):
        self.saved = [(t, t._grad, None if t._grad is None else t._grad._data,
                       None if t._grad is None or not t._grad._vc else t._grad._vc.version) for t in tensors]

    def restore(self) -> None:
        for t, grad, data, version in self.saved:
            t._grad = grad
            if grad is not None:
                grad._data = data
                if version is not None:
                    grad._vc.version = version
                elif grad._vc:
                    grad._vc.version = 0   # the counter was created by the write being undone


def record_backward(roots, gradient=None, names=None, retain_graph=True, show_saved=False,
                    jacobians: bool = False, write_grads: bool = False) -> Trace:
    """Run backward over `roots` (gradviz tensors) and return the Trace with every step, changing no
    .grad the user can see (see EngineRecording); `origins.record` takes any input."""
    return EngineRecording(roots, gradient, names, retain_graph, jacobians, show_saved, write_grads).run()


def written_tensors(roots, live: dict) -> list:
    """Every tensor a backward from `roots` may write .grad into: the leaves and any
    tensor that called retain_grad() on the way."""
    found = {id(t): t for t in live.values()}
    for node in collect([t.grad_fn for t in roots if t.grad_fn is not None]):
        hooks = getattr(node, "hooks", None)
        if hooks is not None and hooks.retains:
            for ref in hooks.retains.values():
                t = ref()
                if t is not None:
                    found[id(t)] = t
    for t in roots:
        found[id(t)] = t
    return list(found.values())
