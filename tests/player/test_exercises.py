"""gradviz.exercises: each checker on a wrong answer and on the right one, the grid of
differences it shows, and that checking changes nothing."""
from __future__ import annotations

import re

import numpy as np
import pytest

import gradviz as torch
from gradviz.exercises import Check, Checks, check, check_choice, check_grad, check_vjp, check_vjps, find_node
from gradviz.tracing import record_backward


@pytest.fixture
def recorded():
    """h = x * b (b broadcast over rows), loss = sum(h * h): a recorded backward and its tensors."""
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    b = torch.tensor([0.5, -1., 2.], requires_grad=True)
    h = x * b
    loss = (h * h).sum()
    trace = record_backward([loss], names={"x": x, "b": b, "h": h, "loss": loss})
    return x, b, h, loss, trace


def cells(html: str) -> list:
    """The numbers of every grid in the HTML, table by table."""
    return [re.findall(r"<td[^>]*>([^<]*)</td>", t) for t in re.findall(r'<table class="gv-grid.*?</table>', html)]


def test_check_numbers_right_and_wrong():
    right = check(torch.tensor([1., 2.]), np.array([1., 2.]), "v")
    assert right and right.ok and str(right) == "✓ v: right (all 2 values)"
    wrong = check([1., 2.5], torch.tensor([1., 2.]), "v")
    assert not wrong
    assert wrong.summary == "1 of 2 values differ; the largest difference is 0.5 at [1] (you: 2.5, engine: 2.0)"
    assert wrong.wrong.tolist() == [False, True]
    scalar = check(0.25, torch.tensor(0.5), "slope")
    assert not scalar and "(you: 0.25, engine: 0.5)" in scalar.summary


def test_check_tolerance_is_allclose_like():
    assert check(np.float32(1 / 3), 1 / 3)               # float32 rounding is not an error
    assert not check(1.001, 1.0)


def test_check_shape_mismatch_names_both_shapes():
    c = check(np.zeros(3), np.zeros((2, 3)), "x.grad")
    assert not c and "shape (3,)" in c.summary and "shape (2, 3)" in c.summary and c.wrong is None


def test_check_strings_and_bools_exactly():
    assert check("MulBackward0", "MulBackward0")
    c = check("Mul", "MulBackward0", "grad_fn")
    assert not c and str(c) == "✗ grad_fn: you wrote 'Mul'; the engine says 'MulBackward0'"
    assert not check(1, True), "a number is not the boolean the engine gave"


def test_check_unreadable_answer():
    c = check("three", 3.0)
    assert not c and "you wrote 'three'" in c.summary
    c = check([[1, 2], [3]], np.zeros(2))
    assert not c and "cannot read the answer as numbers" in c.summary


def test_text_grid_marks_the_wrong_cells():
    c = check([[0., 1.], [2., 9.]], [[0., 1.], [2., 3.]], "m")
    text = str(c).splitlines()
    assert text[0].startswith("✗ m: 1 of 4 values differ; the largest difference is 6.0 at [1, 1]")
    assert "your answer" in text[1] and "the engine" in text[1] and "difference" in text[1]
    assert text[2].count("✗") == 0 and text[3].count("✗") == 1 and text[3].rstrip().endswith("6.0 ✗")


def test_text_of_a_large_array_lists_places():
    want = np.zeros((10, 10))
    got = want.copy()
    got[3, 4] = 1
    assert str(check(got, want, "big")).splitlines()[1] == "  wrong at [3, 4]"


def test_html_grid_of_differences():
    c = check([[0., 1.], [2., 9.]], [[0., 1.], [2., 3.]], "m")
    html = c._repr_html_()
    assert "✗ m" in html and "your answer" in html and "the engine" in html and "<style>" in html
    answer, engine, difference = cells(html)
    assert answer == ["0.0", "1.0", "2.0", "9.0"] and engine == ["0.0", "1.0", "2.0", "3.0"]
    assert difference == ["0.0", "0.0", "0.0", "6.0"]
    right = check([1., 2.], [1., 2.], "m")._repr_html_()
    assert "✓ m" in right and "<table" not in right, "a right answer is a short confirmation"


def test_check_grad(recorded):
    x, b, h, loss, _ = recorded
    c = check_grad(torch.zeros(2, 3), x, "x.grad")
    assert not c and c.summary.startswith("x.grad is None: the tensor has no .grad yet")
    loss.backward()
    assert not check_grad(torch.zeros(2, 3), x, "x.grad")
    assert check_grad(2 * h * b, x, "x.grad")
    assert check_grad(2 * (h * x).sum(0), b, "b.grad")


def test_check_choice():
    assert check_choice("p - y", "p - y", ["p - y", "y - p", "p"])
    c = check_choice("y - p", "p - y", ["p - y", "y - p", "p"])
    assert not c and c.summary == "you chose 'y - p'; the answer is 'p - y'"
    c = check_choice("q", "p - y", ["p - y", "y - p"])
    assert not c and "not one of the choices" in c.summary


def test_check_vjp_values_and_formulas(recorded):
    x, b, h, loss, trace = recorded
    g = 2 * h.detach()                                    # what the node that made h received
    assert check_vjp(g * b, trace, "h", "x")
    assert check_vjp(lambda g: g * b, trace, "h", input=0)
    assert check_vjp(lambda g: (g * x).sum(0), trace, "h", "b"), "the broadcast input's VJP is summed"
    wrong = check_vjp(lambda g: g * x, trace, "h", "b")
    assert not wrong and "shape (2, 3)" in wrong.summary
    off = check_vjp(lambda g: (g * x).sum(0) + torch.tensor([0., 1., 0.]), trace, "h", "b")
    assert not off and off.wrong.tolist() == [False, True, False]
    assert off.name == "the VJP of MulBackward0 (h) → b"


def test_check_vjp_changes_nothing(recorded):
    x, b, h, loss, trace = recorded
    before = len(trace.steps)
    seen = []

    def formula(g):
        seen.append(torch.is_grad_enabled())
        return g * b
    c = check_vjp(formula, trace, "h", "x")
    assert c and seen == [False], "the learner's formula runs under no_grad: it builds no graph"
    assert x.grad is None and b.grad is None and len(trace.steps) == before


def test_check_vjp_reads_animations():
    a = torch.tensor([1., 2.], requires_grad=True)
    y = (a.exp() * 3).sum()
    anim = torch.animate(y)
    assert check_vjp(lambda g: g * a.exp(), anim, "ExpBackward0")
    assert not check_vjp(lambda g: g, anim, "ExpBackward0")


def test_find_node_by_id_tensor_and_grad_fn(recorded):
    *_, trace = recorded
    h = find_node(trace, "h")
    assert trace.node(h).name == "MulBackward0" and find_node(trace, h) == h
    assert trace.node(find_node(trace, "SumBackward0")).name == "SumBackward0"
    with pytest.raises(ValueError, match=r"2 nodes are called 'MulBackward0'"):
        find_node(trace, "MulBackward0")
    with pytest.raises(ValueError, match=r"no node called 'q' in this recording; its nodes: .*h"):
        find_node(trace, "q")


def test_check_vjp_input_errors(recorded):
    *_, trace = recorded
    c = check_vjp(0, trace, "h", "z")
    assert not c and re.search(r"MulBackward0 has no input 'z'; its inputs: 0 \(x\), 1 \(b\)", c.summary)
    assert not check_vjp(0, trace, "q") and "no node called 'q'" in check_vjp(0, trace, "q").summary
    with pytest.raises(TypeError, match="expected a recorded run"):
        check_vjp(0, object(), "h")


def test_check_vjp_before_the_step_ran():
    """A Stepper's trace grows as Next runs nodes: a step not yet run says so."""
    pytest.importorskip("anywidget")
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x.sin()
    loss = y.sum()
    stepper = torch.step(loss)
    early = check_vjp(lambda g: g * x.cos(), stepper, "y")
    assert not early and "backward has not run it" in early.summary, "a failed check, never a raise"
    stepper.next()
    stepper.next()
    assert check_vjp(lambda g: g * x.cos(), stepper, "y")
    assert x.grad is None


def test_check_vjp_of_a_large_gradient_says_why():
    x = torch.ones(10, 10, requires_grad=True)
    y = x * 2
    trace = record_backward([y.sum()], names={"x": x, "y": y})
    c = check_vjp(0, trace, "y")
    assert not c and re.search(r"kept only a summary of this \(10, 10\) gradient", c.summary)


def test_check_is_a_dataclass_with_truth():
    c = Check("n", False, "why")
    assert not c and str(c) == "✗ n: why" and repr(c) == str(c)


def test_placeholder_is_not_answered_yet(recorded):
    *_, trace = recorded
    assert str(check(..., 1.0, "v")) == "✗ v: no answer yet: replace ... with your prediction"
    assert not check_choice(..., "a", ["a", "b"]) and "no answer yet" in check_choice(..., "a", ["a"]).summary
    assert "no answer yet" in check_vjp(lambda g: ..., trace, "h", "x").summary


def test_check_vjps_node_by_node(recorded):
    x, b, h, loss, trace = recorded
    right = {("loss", 0): lambda g: g * torch.ones(2, 3), ("h", "x"): lambda g: g * b, ("h", "b"): lambda g: (g * x).sum(0)}
    checks = check_vjps(right, trace)
    assert isinstance(checks, Checks) and len(checks) == 3 and checks
    assert str(checks).splitlines()[0] == "3 of 3 right"
    one_wrong = check_vjps({**right, ("h", "x"): lambda g: g * x}, trace)
    assert not one_wrong and [bool(c) for c in one_wrong] == [True, False, True]
    html = one_wrong._repr_html_()
    assert "2 of 3 right" in html and html.count("your answer") == 1, "grids only for the wrong one"


def test_a_formula_that_raises_is_a_wrong_answer(recorded):
    x, b, h, loss, trace = recorded
    c = check_vjp(lambda g: g @ b, trace, "h", "x")      # (2, 3) @ (3,) gives (2,): a shape slip, not an error
    assert not c and "shape (2,)" in c.summary
    c = check_vjp(lambda g: g @ x, trace, "h", "x")
    assert not c and c.summary.startswith("your formula raised RuntimeError: ")
    checks = check_vjps({("h", "x"): lambda g: g @ x, ("h", "b"): lambda g: (g * x).sum(0)}, trace)
    assert [bool(c) for c in checks] == [False, True], "the other checks still run"


def test_none_asks_whether_the_function_returned(recorded):
    *_, trace = recorded
    message = "your answer is None: did your function return a value?"
    assert check(None, 1.0, "v").summary == message
    assert check_vjp(lambda g: None, trace, "h", "x").summary == message

    def forgot(g):
        g * 2
    assert check_vjp(forgot, trace, "h", "x").summary == message


def test_a_shape_mismatch_names_the_likely_mistake(recorded):
    x, b, h, loss, trace = recorded
    transposed = check_vjp(lambda g: (g * b).T, trace, "h", "x")
    assert "shape (3, 2), the engine's has shape (2, 3): it looks transposed" in transposed.summary
    assert transposed.summary.endswith("(a gradient always has the shape of its tensor)")
    batch = check_vjp(lambda g: g * x, trace, "h", "b")
    assert "shape (2, 3), the engine's has shape (3,): the engine's has no batch axis: sum over it (.sum(0))" \
        in batch.summary
    kept = check_vjp(lambda g: (g * x).sum(0, keepdim=True), trace, "h", "b")
    assert "the engine's has no axis of size 1 in front" in kept.summary
    plain = check(np.zeros(3), np.zeros(4), "J t")
    assert plain.summary == "your answer has shape (3,), the engine's has shape (4,)", "not a gradient: no rule"
    multiplied = check_vjp(lambda g: g @ x, trace, "h", "x")
    assert "It received ḡ of shape (2, 3) and must return shape (2, 3): a transpose may be missing" in multiplied.summary


def test_hand_work_refuses_autograd(recorded):
    x, b, h, loss, trace = recorded
    for cheat in (lambda g: torch.autograd.grad(h, x, g, retain_graph=True)[0],
                  lambda g: torch.autograd.functional.vjp(lambda t: t * b, x.detach(), g)[1]):
        c = check_vjp(cheat, trace, "h", "x")
        assert not c and "this exercise asks you to compute it by hand" in c.summary
    c = check_vjp(lambda g: (h * h).sum().backward(retain_graph=True), trace, "h", "x")
    assert not c and "called backward()" in c.summary
    assert x.grad is None and torch.autograd.grad is not None, "autograd is back once the check is done"
    assert check_vjp(lambda g: g * b, trace, "h", "x"), "the hand-written VJP passes"
    assert check_vjp(lambda g: torch.autograd.grad(h, x, g, retain_graph=True)[0], trace, "h", "x", hand=False)


def test_check_grad_before_backward_and_the_grad_itself(recorded):
    x, b, h, loss, _ = recorded
    assert check_grad(2 * h * b, x, "x.grad", of=loss) and x.grad is None, "computed without writing .grad"
    loss.backward(retain_graph=True)
    c = check_grad(2 * h * b, x, "x.grad", of=loss)
    assert not c and "already filled in by a backward" in c.summary
    c = check_grad(x.grad, x, "x.grad")
    assert not c and c.summary.startswith("refused: this is x.grad itself")


def test_check_function_runs_the_formula_on_every_case():
    from gradviz.exercises import check_function
    cases = [(torch.tensor([1.0, 2.0]),), (torch.tensor([-3.0, 0.5]),)]
    reference = lambda t: 3 * t ** 2
    assert check_function(lambda t: 3 * t * t, reference, cases, "d/dt t³")
    wrong = check_function(lambda t: 3 * t, reference, cases)
    assert not wrong and "case 1 of 2" in wrong.name
    hard_coded = check_function(lambda t: torch.tensor([3.0, 12.0]), reference, cases)
    assert not hard_coded and "case 2 of 2" in hard_coded.name
    def by_autograd(t):
        t = t.clone().requires_grad_()
        return torch.autograd.grad((t ** 3).sum(), t)[0]
    assert "by hand" in check_function(by_autograd, reference, cases).summary
    assert "no answer yet" in check_function(..., reference, cases).summary
    assert "None" in check_function(None, reference, cases).summary


def test_the_engines_own_tensor_is_refused():
    grad = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    c = check(grad[1], grad[1], "xs.grad[1]")
    assert not c and c.summary.startswith("refused: this is the engine's own value")
    assert check(grad[1].clone(), grad[1], "xs.grad[1]"), "a copy is an answer like any other"


def test_predict_mode_reads_what_each_step_sent(recorded):
    """The saved player's predict data is the Trace's: per backward step, what the node sent to each input."""
    from gradviz.player.predict import payload
    x, b, h, loss, trace = recorded
    found = payload(trace)
    mul = next(v for v in found.values() if v["node"] == "MulBackward0 (h)")
    to = {s["to"]: s for s in mul["sends"]}
    assert to["x"]["shape"] == [2, 3] and np.allclose(to["x"]["values"], (2 * h * b).detach().numpy().ravel())
    assert to["b"]["shape"] == [3] and np.allclose(to["b"]["values"], (2 * h * x).sum(0).detach().numpy())
    squares = next(v for v in found.values() if v["node"].startswith("MulBackward0 (t"))
    assert sorted(s["to"] for s in squares["sends"]) == ["h (input 0)", "h (input 1)"], "h * h: told apart"
    assert all(v["node"] != "AccumulateGrad" for v in found.values())
