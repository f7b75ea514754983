"""Exercise checks: a learner's prediction compared with what the engine computed.

A prediction is a number, an array or tensor, a string or choice, or (for a VJP) a function of
the gradient the step received, written by the learner as a formula in code. Each check returns
a `Check`: true or false, and, when it is wrong, where: a grid of the answer, the engine's value
and their difference (HTML in Jupyter, plain text elsewhere), the wrong cells the only coloured
ones in the difference.

The expected values come from a recorded Trace (an Animation's, a Stepper's, or one from
`tracing.record_backward`) or from a tensor's `.grad`; a check only reads them, and runs a
learner's formula under `no_grad`, so checking changes no tensor, gradient or graph.

    check(answer, expected, name)            a value: numbers and arrays closely, strings exactly
    check_grad(answer, tensor)               tensor.grad after a backward
    check_vjp(answer, recording, node, input=0)
                                             what a recorded step sent to one input; `answer` may
                                             be a function g -> gradient (the VJP written in code)
    check_vjps({(node, input): answer, ...}, recording)
                                             several steps at once, node by node
    check_choice(answer, right, choices)     one of several options
    check_function(answer, reference, cases) a formula written as a function (by hand), run on
                                             each case with autograd switched off
    check_order(answer, roots)               a backward's order over grad_fn nodes: every node once,
                                             each before the nodes it sends to (the engine's is one)
    vjp_of(node, g)                          what a grad_fn sends along each next_functions edge for
                                             the gradient g (torch's `node(g)`), for a backward
                                             loop written by hand

An answer left as `...` (the placeholder of an exercise cell) is reported as not answered yet, and
`None` (a function that forgot its `return`) as such; a shape that differs names the shape wanted
and, where it recognises one, the likely mistake (a transpose, a sum over the batch, keepdim).
Checks meant for work by hand (`hand=True`, the default of check_vjp, check_vjps, check_function)
run the learner's formula with autograd's entry points switched off (backward, autograd.grad,
autograd.functional, gradviz.func, forward-mode duals) and refuse the engine's own tensors given
back as an answer; a value computed with autograd *before* the check cannot be told from one
computed by hand, which is why those exercises ask for a function. A check never raises on a
learner's mistake (a node that has not run yet, a gradient that was never computed): it fails and
says why.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .previews import PREVIEW_MAX, as_matrix
from .formatting import number
from .tracing import Trace
from .creation import tensor
from . import autograd, func
from .autograd import forward_ad, functional, no_grad
from .autograd.engine import node_vjp
from .tensor import Tensor
from .player.mathtext import esc
from .player.html import stylesheet
from .player import grids
from .player.predict import ATOL, RTOL, label as _label

TEXT_CELLS = 64            # larger arrays print as a list of the wrong places, not as a grid


@dataclass
class Check:
    """The verdict on one prediction. Truthy when right; shows itself as HTML or text."""
    name: str
    ok: bool
    summary: str                       # one line: what was right, or what differs and by how much
    answer: np.ndarray | None = None   # numeric predictions keep both arrays, for the grids
    expected: np.ndarray | None = None
    wrong: np.ndarray | None = None    # bool mask: where the answer is not close to the engine's

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        lines = [f"{'✓' if self.ok else '✗'} {self.name}: {self.summary}"]
        if not self.ok and self.wrong is not None:
            lines.append(_text_grids(self))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        mark = "✓" if self.ok else "✗"
        colour = "var(--gv-done, #2a7)" if self.ok else "var(--gv-active, #d62)"
        parts = ['<div class="gv-root gv-check">',
                 f'<p style="margin:0.25em 0"><b style="color:{colour}">{mark} {esc(self.name)}</b>: {esc(self.summary)}</p>']
        if not self.ok and self.wrong is not None:
            parts.insert(1, f"<style>{stylesheet()}</style>")   # the grids' colours
            scale = grids.scale_of(self.answer, self.expected)
            shown = np.where(self.wrong, self.answer - self.expected, 0)
            cells = [("your answer", grids.tensor(self.answer, scale)),
                     ("the engine", grids.tensor(self.expected, scale)),
                     ("difference (0 where right)", grids.tensor(shown, scale))]
            parts.append('<table class="gv-vjp-table"><tr>' + "".join(f"<th>{t}</th>" for t, _ in cells)
                         + "</tr><tr>" + "".join(f"<td>{g}</td>" for _, g in cells) + "</tr></table>")
        parts.append("</div>")
        return "".join(parts)


class Checks(list):
    """Several checks shown together (node by node); truthy when every one is right."""

    def __bool__(self) -> bool:
        return all(self)

    def __str__(self) -> str:
        right = sum(bool(c) for c in self)
        return "\n".join([f"{right} of {len(self)} right"] + [str(c) for c in self])

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        right = sum(bool(c) for c in self)
        return (f'<div><p style="margin:0.25em 0">{right} of {len(self)} right</p>'
                + "".join(c._repr_html_() for c in self) + "</div>")


# -- values -----------------------------------------------------------------------------------
def _array(value) -> np.ndarray:
    """A prediction or an engine value as a NumPy array (Tensors detached, torch tensors too)."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "cpu") and hasattr(value, "numpy"):
        value = value.cpu().numpy()
    return np.asarray(value)


def _where(index: tuple) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def check(answer, expected, name: str = "answer", rtol: float = RTOL, atol: float = ATOL,
          gradient: bool = False) -> Check:
    """Compare a prediction with the engine's value: strings and booleans exactly, numbers and
    arrays elementwise within rtol/atol (as `torch.allclose`); shapes must match exactly.
    `gradient`: the value is a gradient (a shape mismatch says it has the shape of its tensor)."""
    if answer is Ellipsis:
        return Check(name, False, "no answer yet: replace ... with your prediction")
    if answer is None:
        return Check(name, False, "your answer is None: did your function return a value?")
    if isinstance(expected, (str, bool, np.bool_)) or isinstance(answer, str):
        ok = answer == expected and type(answer) is type(expected)
        return Check(name, ok, "right" if ok else f"you wrote {answer!r}; the engine says {expected!r}")
    if hasattr(answer, "shape") and hasattr(expected, "shape") and _is_engines(answer, (expected,)):
        return Check(name, False, "refused: this is the engine's own value (the tensor the check compares "
                                  "with, or a view of it), read instead of predicted")
    want = _array(expected)
    whole = want.dtype.kind in "iu"   # a count such as _version: 3, not 3.0
    want = want.astype(np.float64)
    try:
        got = _array(answer).astype(np.float64)
    except (TypeError, ValueError) as exc:
        return Check(name, False, f"cannot read the answer as numbers ({exc})")
    if got.shape != want.shape:
        return Check(name, False, shape_message(got.shape, want.shape, gradient))
    wrong = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if not wrong.any():
        size = f"all {want.size} values" if want.size > 1 else _number(want.item(), whole)
        return Check(name, True, f"right ({size})", got, want, wrong)
    if whole and np.isfinite(got).all() and (got == np.round(got)).all():
        got, want = got.astype(np.int64), want.astype(np.int64)   # the grids print 2, not 2.0
    diff = np.abs(np.where(np.isfinite(got - want), got - want, np.inf))
    worst = np.unravel_index(int(np.argmax(np.where(wrong, diff, -1))), want.shape) if want.ndim else ()
    count = int(wrong.sum())
    summary = (f"{count} of {want.size} values differ" if want.size > 1 else "differs") + \
              f"; the largest difference is {_number(float(diff[worst]), whole)}" + \
              (f" at {_where(worst)} (you: {_number(float(got[worst]), whole)}, engine: "
               f"{_number(float(want[worst]), whole)})"
               if want.ndim else f" (you: {_number(float(got), whole)}, engine: {_number(float(want), whole)})")
    return Check(name, False, summary, got, want, wrong)


def _number(value: float, whole: bool) -> str:
    """A value as the engine's tensor holds it: an integer one (a version counter) without ".0"."""
    return number(int(value)) if whole and float(value).is_integer() else number(value)


def shape_message(got: tuple, want: tuple, gradient: bool = False) -> str:
    """What a shape mismatch says: both shapes, the likely mistake where one is recognised, and for
    a gradient the rule it breaks."""
    got, want = tuple(int(n) for n in got), tuple(int(n) for n in want)
    text = f"your answer has shape {got}, the engine's has shape {want}"
    hint = shape_hint(got, want)
    if hint:
        text += f": {hint}"
    if gradient:
        text += " (a gradient always has the shape of its tensor)"
    return text


def shape_hint(got: tuple, want: tuple) -> str:
    """The mistake a shape mismatch most likely comes from, or ''."""
    if len(got) == len(want) >= 2 and got == want[:-2] + (want[-1], want[-2]):
        return "it looks transposed (try .T, or swap the operands of the matrix product)"
    if len(got) == len(want) + 1 and got[0] == 1 and got[1:] == want:
        return "the engine's has no axis of size 1 in front: sum without keepdim, or .squeeze(0)"
    if len(got) == len(want) + 1 and got[1:] == want:
        return (f"the engine's has no batch axis: sum over it (.sum(0)), as the forward pass "
                f"broadcast the tensor over the {got[0]} rows")
    if len(got) == len(want) and got[0] != 1 and want[0] == 1 and got[1:] == want[1:]:
        return "sum over the batch and keep the axis: .sum(0, keepdim=True)"
    if len(want) == len(got) + 1 and want[0] == 1 and want[1:] == got:
        return "the engine's keeps the summed axis: keepdim=True"
    if [n for n in got if n != 1] == [n for n in want if n != 1]:
        return "the same numbers of elements along the other axes: an axis of size 1 is missing or extra (keepdim, unsqueeze)"
    return ""


def _text_grids(c: Check) -> str:
    """The answer, the engine's value and the difference as aligned text grids (✗ marks a wrong cell)."""
    if c.expected.size > TEXT_CELLS:
        places = [_where(i) for i in zip(*np.nonzero(c.wrong))][:8]
        return "  wrong at " + ", ".join(places) + (" …" if c.wrong.sum() > 8 else "")
    blocks = [("your answer", as_matrix(c.answer), None), ("the engine", as_matrix(c.expected), None),
              ("difference", as_matrix(np.where(c.wrong, c.answer - c.expected, 0)), as_matrix(c.wrong))]
    columns = []
    for title, m, marks in blocks:
        cells = [[number(v) + (" ✗" if marks is not None and marks[r, k] else "") for k, v in enumerate(row)]
                 for r, row in enumerate(m)]
        width = max(len(s) for row in cells for s in row)
        rows = ["  ".join(s.rjust(width) for s in row) for row in cells]
        columns.append([title.ljust(len(rows[0]))] + [r.ljust(max(len(title), len(r))) for r in rows])
    widths = [max(len(line) for line in col) for col in columns]
    lines = ["    ".join(col[i].ljust(w) for col, w in zip(columns, widths)).rstrip() for i in range(len(columns[0]))]
    return "\n".join("  " + line for line in lines)


def check_grad(answer, tensor, name: str | None = None, rtol: float = RTOL, atol: float = ATOL,
               of=None) -> Check:
    """Compare a prediction with `tensor.grad` (run the backward first), or, given `of` (a scalar
    output), with the gradient of `of` with respect to `tensor`, computed here without writing any
    .grad: the learner predicts it before any backward has filled .grad, by hand."""
    name = name or "the gradient"
    if of is not None:
        if tensor.grad is not None:
            return Check(name, False, f"refused: {name} was already filled in by a backward. This exercise asks "
                                      "you to work it out by hand, before any backward runs")
        (expected,) = autograd.grad(of, tensor, retain_graph=True)
        return check(answer, expected, name, rtol, atol, gradient=True)
    if tensor.grad is None:
        return Check(name, False, f"{name} is None: the tensor has no .grad yet (call .backward() first, and "
                                  "check that the tensor requires grad and is a leaf or called retain_grad())")
    if _is_engines(answer, (tensor.grad,)):
        return Check(name, False, f"refused: this is {name} itself, read from the tensor. Predict it")
    return check(answer, tensor.grad, name, rtol, atol, gradient=True)


def check_choice(answer, right, choices: Sequence, name: str = "your choice") -> Check:
    """One of several options: says when the answer is not among them at all."""
    if answer is Ellipsis:
        return check(answer, right, name)
    if answer not in choices:
        return Check(name, False, f"{answer!r} is not one of the choices {list(choices)!r}")
    ok = answer == right
    return Check(name, ok, f"{answer!r} is right" if ok else f"you chose {answer!r}; the answer is {right!r}")


# -- recorded steps ---------------------------------------------------------------------------
def _trace(recording) -> Trace:
    trace = recording if isinstance(recording, Trace) else getattr(recording, "trace", None)
    if not isinstance(trace, Trace):
        raise TypeError("expected a recorded run: a Trace, an Animation (gradviz.animate) or a Stepper "
                        f"(gradviz.step), not {type(recording).__name__}")
    return trace


def find_node(recording, node: str) -> str:
    """The id of a node, named by its id ('n4'), the tensor it made ('h'), or its grad_fn's name
    ('MulBackward0') where only one node has it."""
    trace = _trace(recording)
    ops = [n for n in trace.nodes if n.kind in ("op", "accumulate")]
    for match in (lambda n: n.id == node, lambda n: n.kind == "op" and n.tensor_name == node,
                  lambda n: n.name == node):
        found = [n.id for n in ops if match(n)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise ValueError(f"{len(found)} nodes are called {node!r} ({', '.join(found)}): name one by the tensor it "
                             f"made ({', '.join(repr(_label(trace, i)) for i in found)}) or by its id")
    known = sorted({n.tensor_name for n in ops if n.tensor_name} | {n.name for n in ops})
    raise ValueError(f"no node called {node!r} in this recording; its nodes: {', '.join(known)}")


def _input_edge(trace: Trace, node_id: str, input) -> object:
    edges = trace.edges_into(node_id)
    if isinstance(input, int):
        found = [e for e in edges if e.slot == input]
    else:
        found = [e for e in edges if _label(trace, e.src) == input or trace.node(e.src).name == input]
    if len(found) != 1:
        names = ", ".join(f"{e.slot} ({_label(trace, e.src)})" for e in edges)
        what = "no input" if not found else f"{len(found)} inputs"
        raise ValueError(f"{trace.node(node_id).name} has {what} {input!r}; its inputs: {names or 'none'}")
    return found[0]


def check_vjp(answer, recording, node: str, input: int | str = 0, rtol: float = RTOL, atol: float = ATOL,
              hand: bool = True) -> Check:
    """Compare a prediction with the gradient a recorded backward step sent to one of its inputs.

    node: the node's id, the tensor it made, or its grad_fn name (when unique). input: the input's
    position or the name of the tensor it reads. answer: the gradient itself, or the VJP as a
    function of the gradient(s) the step received (one argument per output of the node), called
    with gradviz tensors under no_grad, e.g. `lambda g: g @ W.T`. `hand`: the formula runs with
    autograd switched off (the exercise asks for the VJP by hand, not for autograd's)."""
    trace = _trace(recording)
    try:
        node_id = find_node(trace, node)
        edge = _input_edge(trace, node_id, input)
    except ValueError as exc:   # a name the recording does not know: say so, as a failed check
        return Check(f"the VJP of {node} → {input}", False, str(exc))
    step = next((s for s in trace.steps if s.node == node_id), None)
    name, made = trace.node(node_id).name, _label(trace, node_id)
    label = f"{name if made == name else f'{name} ({made})'} → {_label(trace, edge.src)}"
    check_name = f"the VJP of {label}"
    if step is None:
        return Check(check_name, False, "the recording has no step of this node yet: backward has not run it "
                                        "(with a Stepper, press Next until it has)")
    flow = next((p for e, p, *_ in step.flows if e == edge.id), None)
    if flow is None:
        return Check(check_name, False, "the step sent no gradient to that input (it does not require grad)")
    if flow.values is None:
        return Check(check_name, False, f"the recording kept only a summary of this {flow.shape} gradient "
                                        f"(values are kept up to {PREVIEW_MAX} elements); check a smaller example")
    if callable(answer):
        received = [tuple(p.shape) for p in step.grad_in]
        try:
            answer = _apply(answer, step.grad_in, hand)   # a formula left as `return ...` gives Ellipsis
        except HandWork as exc:
            return Check(check_name, False, str(exc))
        except Exception as exc:   # the learner's formula failed: say so here, and let the other checks run
            return Check(check_name, False, _raised(exc, received, tuple(flow.shape)))
    return check(answer, flow.values, check_name, rtol, atol, gradient=True)


def check_vjps(answers: dict, recording, rtol: float = RTOL, atol: float = ATOL, hand: bool = True) -> Checks:
    """check_vjp for each (node, input) -> answer of `answers`, in order: a backward written node by node."""
    return Checks(check_vjp(answer, recording, node, input, rtol, atol, hand)
                  for (node, input), answer in answers.items())


def check_function(answer, reference, cases: Sequence, name: str = "your function", rtol: float = RTOL,
                   atol: float = ATOL, hand: bool = True) -> Check:
    """A formula written as a function, checked on every case (a tuple of arguments) against
    `reference(*case)`: the engine's values, computed with autograd where the exercise is about
    gradients. The learner's function runs with autograd switched off (`hand`), so it must compute
    what it returns itself; the first case that differs is the one shown."""
    if answer is Ellipsis or answer is None or not callable(answer):
        if answer is Ellipsis or answer is None:
            return check(answer, 0.0, name)
        return Check(name, False, f"expected a function (def or lambda), not {type(answer).__name__}")
    for k, case in enumerate(cases):
        expected = reference(*case)
        try:
            got = _call(answer, case, hand)
        except HandWork as exc:
            return Check(name, False, str(exc))
        except Exception as exc:
            return Check(name, False, _raised(exc, [tuple(getattr(a, "shape", ())) for a in case],
                                              tuple(_array(expected).shape)))
        if got is Ellipsis:
            return check(got, expected, name)
        result = _compare(got, expected, name if len(cases) == 1 else f"{name} (case {k + 1} of {len(cases)})",
                          rtol, atol)
        if not result:
            return result
    return Check(name, True, f"right on all {len(cases)} cases" if len(cases) > 1 else result.summary)


def _compare(got, expected, name: str, rtol: float, atol: float) -> Check:
    """check() for one value, or item by item for a tuple or list of them (several gradients)."""
    if not isinstance(expected, (tuple, list)):
        return check(got, expected, name, rtol, atol)
    if got is None:
        return check(got, expected, name)
    if not isinstance(got, (tuple, list)) and np.ndim(_array(got)) and len(_array(got)) == len(expected):
        got = list(_array(got))        # one array holding the gradients row by row
    elif not isinstance(got, (tuple, list)) and len(expected) == 1:
        return check(got, expected[0], name, rtol, atol)
    if not isinstance(got, (tuple, list)) or len(got) != len(expected):
        what = "None" if got is None else f"{len(got)} values" if isinstance(got, (tuple, list)) else "one value"
        return Check(name, False, f"expected {len(expected)} values (a list or tuple), got {what}")
    for i, (a, b) in enumerate(zip(got, expected)):
        result = check(a, b, f"{name}, item {i}", rtol, atol)
        if not result:
            return result
    return Check(name, True, f"right (all {len(expected)} items)")


# -- a backward loop by hand --------------------------------------------------------------------
def vjp_of(node, *grads) -> tuple:
    """What the grad_fn `node` sends along each of its next_functions edges for the gradient(s) it
    received (one per output), as torch's `node(*grads)`: a Tensor per edge, None where nothing
    flows. It runs the node's own VJP and changes nothing."""
    g = grads[0] if len(grads) == 1 else tuple(grads)
    raw = g._data if isinstance(g, Tensor) else tuple(x._data for x in g) if isinstance(g, tuple) else np.asarray(g)
    sent, _ = node_vjp(node, raw)
    return tuple(None if x is None else tensor(x) for x in sent)


def graph_nodes(root) -> list:
    """Every grad_fn reachable from `root` (a grad_fn), each once."""
    seen, order, stack = set(), [], [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(n for n, _ in node.next_functions)
    return order


def engine_order(output) -> list:
    """The grad_fn nodes in the order the engine runs them for `output.backward()`, read with
    pre-hooks on a backward whose .grad writes are then undone."""
    nodes = graph_nodes(output.grad_fn)
    leaves = [(n.variable, n.variable.grad) for n in nodes if hasattr(n, "variable")]
    ran: list = []
    handles = [n.register_prehook(lambda g, n=n: ran.append(n)) for n in nodes]
    try:
        output.backward(retain_graph=True)
    finally:
        for h in handles:
            h.remove()
        for leaf, grad in leaves:
            leaf.grad = grad
    return ran


def check_order(answer, outputs: Sequence, name: str = "your order") -> Check:
    """A backward's order, checked: `answer` is a function of a grad_fn returning a list of nodes,
    run on each output's graph; right when it lists every node once, each before every node it
    sends a gradient to. Where it fails, the engine's order (one right answer) is shown."""
    if answer is Ellipsis or answer is None:
        return check(answer, 0.0, name)
    for k, output in enumerate(outputs):
        label = name if len(outputs) == 1 else f"{name} (graph {k + 1} of {len(outputs)})"
        try:
            order = _call(answer, (output.grad_fn,), True)
        except HandWork as exc:
            return Check(label, False, str(exc))
        except Exception as exc:
            return Check(label, False, f"your function raised {type(exc).__name__}: {exc}")
        if order is Ellipsis or order is None:
            return check(order, 0.0, label)
        problem = _order_problem(order, graph_nodes(output.grad_fn))
        if problem:
            engine = ", ".join(n.name() for n in engine_order(output))
            return Check(label, False, f"{problem}; the engine ran: {engine}")
    return Check(name, True, f"a valid order on all {len(outputs)} graphs")


def _order_problem(order, nodes: list) -> str:
    order = list(order)
    place = {id(n): i for i, n in enumerate(order)}
    missing = [n for n in nodes if id(n) not in place]
    if missing:
        return f"{missing[0].name()} is missing ({len(order)} nodes listed, the graph has {len(nodes)})"
    if len(order) != len(nodes):
        return f"{len(order)} nodes listed, the graph has {len(nodes)}: a node listed twice"
    for node in order:
        for nxt, _ in node.next_functions:
            if nxt is not None and place[id(nxt)] < place[id(node)]:
                return (f"{nxt.name()} comes before {node.name()}, which sends it its gradient: it would run "
                        "before all of its gradient had arrived")
    return ""


# -- work by hand ------------------------------------------------------------------------------
class HandWork(Exception):
    """The learner's formula called autograd where the exercise asks for the computation by hand."""


# autograd's entry points, switched off while a learner's hand-written formula runs
_ENTRY_POINTS = [(autograd, "grad"), (autograd, "backward"), (Tensor, "backward")] + \
    [(functional, n) for n in ("vjp", "jvp", "jacobian", "hessian", "vhp", "hvp")] + \
    [(func, n) for n in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian")] + \
    [(forward_ad, "make_dual")]


@contextmanager
def autograd_off():
    """Every autograd entry point raises HandWork, saying what the exercise asks instead."""
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr in _ENTRY_POINTS if hasattr(owner, attr)]

    def refuse(attr):
        def refused(*args, **kwargs):
            raise HandWork(f"your formula called {attr}(): this exercise asks you to compute it by hand "
                           "(a VJP from ḡ and the tensors the forward pass made), not to ask autograd")
        return refused
    for owner, attr, _ in saved:
        setattr(owner, attr, refuse(attr))
    try:
        yield
    finally:
        for owner, attr, fn in saved:
            setattr(owner, attr, fn)


def _call(formula: Callable, args: tuple, hand: bool):
    with no_grad():
        if not hand:
            return formula(*args)
        with autograd_off():
            return formula(*args)


def _apply(formula: Callable, received: tuple, hand: bool = False):
    """The learner's VJP formula applied to what the step received, without recording a graph."""
    return _call(formula, tuple(tensor(p.values) for p in received), hand)


def _is_engines(answer, engines) -> bool:
    """The answer is one of the engine's own tensors (a .grad), or a view of one."""
    for value in engines:
        if value is None:
            continue
        if answer is value:
            return True
        try:
            if np.shares_memory(_array(answer), _array(value)):
                return True
        except (TypeError, ValueError):
            continue
    return False


def _raised(exc: Exception, received: list, wanted: tuple) -> str:
    """What a formula that raised says, with the shapes it worked with when it was a shape error."""
    text = f"your formula raised {type(exc).__name__}: {exc}"
    message = str(exc)
    if "shapes cannot be multiplied" in message or "size of tensor" in message or "broadcast" in message:
        shapes = ", ".join(str(s) for s in received)
        text += (f". It received ḡ of shape {shapes} and must return shape {wanted}: "
                 "a transpose may be missing, or the product's operands swapped")
    return text
