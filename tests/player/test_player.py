"""The player's frame data, panel text, Jacobians, HTML and Stepper, without a browser."""
import html as htmllib
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import gradviz as torch
from gradviz.player import animate, build_frames, jacobian_view, local_jacobians, state_at
from gradviz.player import mathtext
from gradviz.player.stage import Stage


def grids_in(html: str) -> list:
    """The numbers of every tensor grid in a panel, as lists of rows."""
    tables = re.findall(r'<table class="gv-grid[^"]*">(.*?)</table>', html)
    return [[[float(v) for v in re.findall(r"<td[^>]*>([^<]*)</td>", row)]
             for row in re.findall(r"<tr[^>]*>(.*?)</tr>", t)] for t in tables]


def plain(markup: str) -> str:
    """Panel HTML as the text a reader sees (tags dropped, entities decoded, spaces squeezed)."""
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", markup))).strip()


def fan_out():
    a = torch.tensor(1.0, requires_grad=True)
    a.name = "a"
    loss = a * 2.0 + a * 3.0
    return a, loss


def broadcast():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], requires_grad=True)
    loss = (a * b).sum()
    return a, b, loss


# -- frames ------------------------------------------------------------------------------
def test_frame_count_is_forward_ops_plus_steps():
    a, loss = fan_out()
    anim = animate(loss)
    ops = [n for n in anim.trace.nodes if n.kind == "op"]
    assert len(anim.steps) == 4          # AddBackward0, two MulBackward0, one AccumulateGrad
    assert len(anim.frames) == len(ops) + len(anim.steps)
    assert [f.phase for f in anim.frames] == ["forward"] * len(ops) + ["backward"] * len(anim.steps)
    backward = [f for f in anim.frames if f.phase == "backward"]
    assert [f.step for f in backward] == list(range(len(anim.steps)))
    assert [f.node for f in backward] == [s.node for s in anim.steps]
    assert len(animate(fan_out()[1], forward=False).frames) == 4
    # frames are a pure function of the trace: rebuilding gives the same changes and texts
    rebuilt = build_frames(anim.trace, forward=True)
    assert [(f.changes, f.labels, f.text) for f in rebuilt] == [(f.changes, f.labels, f.text) for f in anim.frames]


def test_forward_frames_grow_the_graph_in_creation_order():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = y * x
    loss = z.sum()
    anim = animate(loss)
    forward = [f for f in anim.frames if f.phase == "forward"]
    assert [anim.trace.node(f.node).name for f in forward] == ["ExpBackward0", "MulBackward0", "SumBackward0"]
    first = state_at(anim.frames, 0)
    exp_id = forward[0].node
    mul_id, sum_id = forward[1].node, forward[2].node
    assert first[exp_id] == "new" and first[mul_id] == "hidden" and first[sum_id] == "hidden"
    second = state_at(anim.frames, 1)
    assert second[exp_id] == "built" and second[mul_id] == "new" and second[sum_id] == "hidden"
    assert "c = eᵃ" in plain(forward[0].text) or "ExpBackward0" in plain(forward[0].text)


def test_ids_are_stable_and_all_present_in_the_svg():
    a, b, loss = broadcast()
    anim = animate(loss)
    svg_ids = set(re.findall(r'<g id="([^"]+)" class="(?:node|edge)', anim.svg))
    trace_ids = {n.id for n in anim.trace.nodes} | {e.id for e in anim.trace.edges}
    assert trace_ids <= svg_ids
    used = set()
    for f in anim.frames:
        used |= set(f.changes) | set(f.labels) | {f.node}
    assert used <= trace_ids
    assert set(state_at(anim.frames, len(anim.frames) - 1)) == trace_ids
    # the same program draws the same ids: frames are addressed by stable counters, not id()
    a2, b2, loss2 = broadcast()
    again = animate(loss2)
    assert [f.node for f in again.frames] == [f.node for f in anim.frames]
    assert [sorted(f.changes) for f in again.frames] == [sorted(f.changes) for f in anim.frames]
    # every edge that carries gradient has a midpoint to write its value at
    assert {eid for f in anim.frames for eid in f.labels} <= set(anim.stage.midpoints)


def test_backward_states_follow_the_engine():
    a, b, loss = broadcast()
    anim = animate(loss, forward=False)
    for k, step in enumerate(anim.steps):
        state = state_at(anim.frames, k)
        assert state[step.node] == "active"
        assert [i for i, s in state.items() if s == "active"] == [step.node]
        for edge_id, _, _ in step.flows:
            assert state[edge_id] == "flowing"
        for earlier in anim.steps[:k]:
            assert state[earlier.node] == "done"
        for later in anim.steps[k + 1:]:
            assert state[later.node] in ("waiting", "pending")
    final = state_at(anim.frames, len(anim.frames) - 1)
    leaves = [n.id for n in anim.trace.nodes if n.kind == "leaf"]
    assert all(final[i] == "written" for i in leaves)


def test_accumulation_sums_equal_the_final_grad():
    a, b, loss = broadcast()
    c = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    loss = loss + (a * c).sum() + (c * c).sum()
    leaves = {"a": a, "b": b, "c": c}
    anim = animate(loss, names=leaves)
    assert all(t.grad is None for t in leaves.values())   # recording leaves .grad alone
    loss.backward()                                        # the graph stayed retainable
    for node in anim.trace.nodes:
        if node.kind != "leaf":
            continue
        grad = leaves[node.name].grad.numpy()
        accs = [acc for step in anim.steps for acc in step.accumulations if acc.node == node.id]
        assert len(accs) == 1
        total = sum(np.asarray(acc.contribution.values, dtype=np.float64) for acc in accs)
        np.testing.assert_allclose(total, grad, rtol=1e-6)
        np.testing.assert_allclose(accs[-1].total.values, grad, rtol=1e-6)
        # and the fan-in as the frames recorded it: the contributions that reached the leaf sum to .grad
        acc_node = next(e.dst for e in anim.trace.edges if e.src == node.id)
        sent = [g.values for step in anim.steps for eid, g, _ in step.flows
                if next(e for e in anim.trace.edges if e.id == eid).src == acc_node]
        np.testing.assert_allclose(np.sum(sent, axis=0), grad, rtol=1e-6)


def test_running_sum_text_for_fan_out():
    a, loss = fan_out()
    anim = animate(loss)
    assert a.grad is None                 # recording changes no .grad
    loss.backward()
    assert a.grad.item() == 5.0
    acc_frame = next(f for f in anim.frames if f.phase == "backward" and "AccumulateGrad" in f.title)
    text = plain(acc_frame.text)
    assert re.search(r"a\.grad = 5\.0 = (2\.0 \+ 3\.0|3\.0 \+ 2\.0)", text), text
    assert "used 2 times" in text
    # while the second MulBackward0 runs, the panel shows the sum so far, and that it is complete
    running = [plain(f.text) for f in anim.frames if "running sum" in plain(f.text).lower()]
    assert len(running) == 2
    assert "1 of 2" in running[0]
    assert re.search(r"∂L/∂a ← 5\.0 = (2\.0 \+ 3\.0|3\.0 \+ 2\.0)", running[1]), running[1]


def test_accumulating_into_an_existing_grad_shows_the_old_value():
    a, loss = fan_out()
    a.grad = torch.tensor(1.0)
    anim = animate(loss)
    text = plain(next(f for f in anim.frames if "AccumulateGrad" in f.title).text)
    assert re.search(r"a\.grad = 6\.0 = 1\.0 \+ (2\.0 \+ 3\.0|3\.0 \+ 2\.0)", text), text
    assert "already there" in text
    assert a.grad.item() == 1.0           # put back as it was
    loss.backward()
    assert a.grad.item() == 6.0


def test_broadcast_sum_text_and_edge_label():
    a, b, loss = broadcast()
    anim = animate(loss, forward=False)
    mul = next(f for f in anim.frames if "MulBackward0" in f.title)
    text = plain(mul.text)
    assert "summed over axis 0" in text
    assert "(3,)" in text
    assert any(label.endswith("Σ0") for label in mul.labels.values())
    assert a.grad is None
    loss.backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0, 3.0])


def test_vjp_formulas_and_values_on_the_step_panel():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    x.name, w.name = "x", "w"
    loss = (x * w).sum()
    anim = animate(loss, forward=False)
    frame = anim.frames[1]
    assert anim.trace.node(frame.node).name == "MulBackward0"
    text = plain(frame.text)
    assert [[3.0, 4.0]] in grids_in(frame.text) and [[1.0, 2.0]] in grids_in(frame.text)   # ∂L/∂x = ḡ ⊙ w, ∂L/∂w = ḡ ⊙ x
    assert "<math" in frame.text and "&#x02299;" in frame.text and "<mi>w</mi>" in frame.text
    assert "chain rule" in text
    assert "Backward starts here" in plain(anim.frames[0].text)
    assert set(frame.labels.values()) == {"[3.0, 4.0]", "[1.0, 2.0]"}


def test_hooks_fired_are_named():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2

    def double_it(g):
        return g * 2

    y.register_hook(double_it)
    anim = animate(y.sum(), forward=False)
    hooked = [f for f in anim.frames if "double_it" in plain(f.text)]
    assert len(hooked) == 1 and "which replaces it" in plain(hooked[0].text)
    text = hooked[0].text
    # in the order it ran: what arrived, the hook, the ḡ after it, then the VJPs that use it
    order = [text.index(k) for k in ("received", "gv-hook", "after the hooks", "gv-vjps")]
    assert order == sorted(order), order
    hook_row = text[text.index("gv-hook"):text.index("after the hooks")]
    assert grids_in(hook_row) == [[[1.0, 1.0]], [[2.0, 2.0]]]      # the gradient before and after the hook
    assert x.grad is None


def test_user_names_are_escaped_everywhere():
    evil = '<script>alert("x")</script>&'
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.name = evil
    loss = (x * x).sum()
    anim = animate(loss, names={"</script><b>loss": loss})
    page = anim.html()
    assert "<script>alert" not in page
    assert "</script><b>" not in page
    # the frame data, the stage's one line (html.markup) and the player, nothing else (script elements:
    # a bare "<script" also occurs in code, as "i<scripts.length" in the vendored pan/zoom library)
    assert len(re.findall(r"<script[\s>]", page)) == 3
    for f in anim.frames:
        assert "<script>alert" not in f.text and evil not in f.text


def test_stepper_pauses_the_engine_between_clicks():
    pytest.importorskip("anywidget")
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    a.name, b.name = "a", "b"
    loss = (a * b + a).sum()
    s = torch.step(loss)
    assert s.position == 0 and a.grad is None
    assert s.total == 6 and not s.finished          # frame 0 (before backward) and the graph's 5 nodes
    s.next().next().next()
    assert [s.trace.node(f.node).name for f in s.recorded] == ["SumBackward0", "AddBackward0", "MulBackward0"]
    assert a.grad is None                      # the engine stopped before AccumulateGrad
    assert len(s.frames) == 4 and s.frames[3]["n"] == s.recorded[2].node
    assert s.frames[3]["c"][s.recorded[2].node] == "active"
    s.next()
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 5.0])
    assert "a.grad" in plain(s.panel()) and "[4.0, 5.0]" in plain(s.now)
    s.prev()
    assert s.position == 3 and len(s.recorded) == 4
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 5.0])   # replaying does not rewind the engine
    s.run_to_end()
    assert s.finished and s.position == len(s.recorded) == 5 and s.total == 6
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 2.0])
    s.reset()
    assert a.grad is None and b.grad is None and s.position == 0 and len(s.frames) == 1
    s.goto(5)
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 5.0])


def test_stepper_answers_the_players_messages():
    """The browser asks for frames by message ('go' runs the engine, 'reset' restarts); replaying a
    frame already run only moves, as synced state (position)."""
    pytest.importorskip("anywidget")
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    a.grad = torch.tensor([10.0, 10.0])
    loss = (a * a).sum()
    s = torch.step(loss)
    s._on_msg(s, {"go": 2}, [])
    assert s.position == 2 and s.finished is False
    np.testing.assert_allclose(a.grad.numpy(), [10.0, 10.0])    # AccumulateGrad has not run yet
    s.position = 1                                             # what the browser's replay sets
    assert s.position == 1 and len(s.recorded) == 2
    s._on_msg(s, {"go": 3}, [])
    assert s.position == 3 and s.finished               # the last node ran: Next is disabled in the player
    np.testing.assert_allclose(a.grad.numpy(), [12.0, 14.0])
    s._on_msg(s, {"go": 99}, [])
    assert s.finished and s.position == len(s.frames) - 1 == 3
    s._on_msg(s, {"reset": True}, [])
    np.testing.assert_allclose(a.grad.numpy(), [10.0, 10.0])
    assert s.position == 0
    # the widget runs the saved player's own script and stylesheet
    from gradviz.player.html import script, stylesheet
    assert script() in s._esm and stylesheet() in s.markup


# -- Jacobians ------------------------------------------------------------------------------
def numeric_jacobian(f, inputs, which, eps=1e-6):
    base = [np.array(x, dtype=np.float64) for x in inputs]
    out = np.asarray(f(*base))
    J = np.zeros((out.size, base[which].size))
    for k in range(base[which].size):
        plus = [x.copy() for x in base]
        minus = [x.copy() for x in base]
        plus[which].reshape(-1)[k] += eps
        minus[which].reshape(-1)[k] -= eps
        J[:, k] = (np.asarray(f(*plus)) - np.asarray(f(*minus))).reshape(-1) / (2 * eps)
    return J


def test_local_jacobian_of_mul_matches_finite_differences():
    a0, b0 = np.array([[1.0, -2.0, 3.0]]), np.array([[0.5], [2.0]])
    a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
    c = a * b                                  # broadcast: J has the summed-out structure
    Ja, Jb = local_jacobians(c.grad_fn)
    np.testing.assert_allclose(Ja, numeric_jacobian(lambda x, y: x * y, [a0, b0], 0), atol=1e-6)
    np.testing.assert_allclose(Jb, numeric_jacobian(lambda x, y: x * y, [a0, b0], 1), atol=1e-6)


def test_local_jacobian_of_matmul_matches_finite_differences():
    A0, B0 = np.arange(6.0).reshape(2, 3) / 3, np.arange(6.0).reshape(3, 2) - 2
    A = torch.tensor(A0, dtype=torch.float64, requires_grad=True)
    B = torch.tensor(B0, dtype=torch.float64, requires_grad=True)
    C = A @ B
    JA, JB = local_jacobians(C.grad_fn)
    assert JA.shape == (4, 6) and JB.shape == (4, 6)
    np.testing.assert_allclose(JA, numeric_jacobian(lambda x, y: x @ y, [A0, B0], 0), atol=1e-6)
    np.testing.assert_allclose(JB, numeric_jacobian(lambda x, y: x @ y, [A0, B0], 1), atol=1e-6)


def test_local_jacobian_skips_large_and_freed_nodes():
    x = torch.ones(100, requires_grad=True)
    assert all(J is None for J in local_jacobians((x * 2).grad_fn))
    y = torch.tensor([1.0, 2.0], requires_grad=True)
    z = y * y
    z.sum().backward()                           # frees MulBackward0's saved tensors
    assert local_jacobians(z.grad_fn) == [None, None]


def test_jacobian_view_rows_are_one_hot_backwards_and_vjp_is_vT_J():
    # the tutorials' example: y = x M, backward with [1, 0], [0, 1], [1, 1]
    M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    x = torch.tensor([[0.5, -1.0]], requires_grad=True)
    view = jacobian_view(lambda t: torch.mm(t, M), x, vs=[[[1, 0]], [[0, 1]], [[1, 1]]])
    np.testing.assert_allclose(view.matrix, M.numpy().T)
    assert len(view.products) == 3
    for v, got, want in view.products:
        np.testing.assert_allclose(got, want, rtol=1e-6)
        y = torch.mm(x, M)
        x.grad = None
        y.backward(torch.tensor(v, dtype=torch.float32))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(view.products[2][1], view.products[0][1] + view.products[1][1])
    page = view._repr_html_()
    assert "gv-jac" in page and "equal" in page and "DIFFERENT" not in page


def test_jacobian_view_of_a_nonlinear_function_matches_finite_differences():
    x0 = np.array([0.3, -0.7, 1.1])
    view = jacobian_view(lambda t: torch.tanh(t) * t.sum(), torch.tensor(x0, dtype=torch.float64))
    numeric = numeric_jacobian(lambda t: np.tanh(t) * t.sum(), [x0], 0)
    np.testing.assert_allclose(view.matrix, numeric, atol=1e-6)
    assert len(view.products) == 4                 # three one-hot seeds and all ones


# -- text, HTML, GIF --------------------------------------------------------------------------
def test_formulas_become_mathml():
    for formula in ("c = a ⊙ b", "ḡ ⊙ b ⊙ aᵇ⁻¹", "ḡ ⊙ e^(a − c)", "cᵢ = Σ_{j≤i} aⱼ", "Σ ḡ over the expanded axes",
                    "x.grad += ḡ", "c = cond ? a : b"):
        markup = mathtext.math(formula)
        ET.fromstring(markup)                      # well-formed
        assert markup.startswith("<math")
    assert "<msup><mi>a</mi><mrow><mi>b</mi><mo>−</mo><mn>1</mn></mrow></msup>" in mathtext.math("aᵇ⁻¹")
    assert "<mtext>\u00a0over the expanded axes\u00a0</mtext>" in mathtext.math("Σ ḡ over the expanded axes")
    assert "<mo>+=</mo>" in mathtext.math("x.grad += ḡ")
    assert mathtext.math("<b>") == "<math><mo>&lt;</mo><mi>b</mi><mo>&gt;</mo></math>"
    assert mathtext.number(2.0) == "2.0" and mathtext.number(1 / 3) == "0.3333"


def test_saved_html_is_self_contained(tmp_path):
    a, loss = fan_out()
    anim = animate(loss)
    path = anim.save(tmp_path / "backward.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(link|img|iframe)\b", page)
    assert not re.search(r"<script[^>]*\bsrc=", page)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "@import" not in page and "url(" not in page
    # frame 0 is drawn without script, and the data the script reads is all there
    assert "gv-new" in page
    data = re.search(r'<script type="application/json" class="gv-data">(.*?)</script>', page, re.S).group(1)
    import json
    parsed = json.loads(data)
    assert len(parsed["frames"]) == len(anim.frames)
    assert anim._repr_html_().startswith('<div class="gv-root gv-player"')


def big_graph(n_params=100, size=4):
    """A 301-node graph with 200 backward steps: 100 leaves (+ AccumulateGrad), 100 ops, the output."""
    params = [torch.randn(size, requires_grad=True) for _ in range(n_params)]
    h = params[0]
    for i, p in enumerate(params[1:]):
        h = h * p if i % 2 else h + p
    return h.sum()


def test_html_for_200_steps_over_300_nodes_stays_under_2_mb():
    loss = big_graph()
    anim = animate(loss, forward=False, max_nodes=None)    # unfolded: every node and step drawn
    assert len(anim.trace.nodes) == 301 and len(anim.steps) == 200
    assert len(anim.frames) == 200
    size = len(anim.html().encode("utf-8"))
    assert size < 2_000_000, size


def test_stage_restyles_by_id_without_graphviz():
    a, loss = fan_out()
    anim = animate(loss, forward=False)
    stage = Stage(anim.svg)
    node = anim.steps[0].node
    styled = stage.render({node: "active"}, {anim.steps[0].flows[0][0]: "1.0"})
    assert re.search(rf'<g id="{node}" class="node[^"]* gv-active', styled) or \
        re.search(rf'<g id="{node}" class="node gv-active', styled)
    assert '<g class="gv-labels"><text' in styled
    ET.fromstring(styled)                        # still well-formed SVG


def test_save_gif(tmp_path):
    import shutil
    PIL = pytest.importorskip("PIL")  # noqa: F841
    if not shutil.which("dot") or not shutil.which("neato"):
        pytest.skip("the system Graphviz (dot, neato) is not installed")
    from PIL import Image
    a, loss = fan_out()
    anim = animate(loss)
    path = anim.save(tmp_path / "backward.gif", duration_ms=300)
    with Image.open(path) as im:
        assert im.n_frames == len(anim.frames)
        assert im.info["duration"] == 300


def test_gif_without_graphviz_says_how_to_install(tmp_path, monkeypatch):
    pytest.importorskip("PIL")
    a, loss = fan_out()
    anim = animate(loss)
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        anim.save(tmp_path / "x.gif")
    assert not (tmp_path / "x.gif").exists()


def test_errors_name_the_problem():
    x = torch.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        animate(x)
    y = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        animate(y)
    anim = animate(y, gradient=torch.tensor([1.0, 0.5]))
    with pytest.raises(ValueError, match=r"\.html or \.gif"):
        anim.save("x.mp4")


def test_a_real_pytorch_backward_animates_through_the_torch_bridge():
    torch_ = pytest.importorskip("torch")
    from gradviz.torch_bridge import record_torch_backward
    a = torch_.tensor([1.0, 2.0], requires_grad=True)
    b = torch_.tensor([3.0, 4.0], requires_grad=True)
    loss = (a * b + a).sum()
    trace = record_torch_backward(loss, params={"a": a, "b": b})
    anim = animate(trace)
    names = [anim.trace.node(f.node).name for f in anim.frames if f.phase == "backward"]
    assert names == ["SumBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad", "AccumulateGrad"]
    writes = [f.text[f.text.index("gv-write"):] for f in anim.frames if "a.grad" in plain(f.text) and "gv-write" in f.text]
    assert any(grids_in(w)[0] == [[4.0, 5.0]] and sorted(grids_in(w)[1:]) == [[[1.0, 1.0]], [[3.0, 4.0]]]
               for w in writes), writes
    assert a.grad is None                 # the recorded backward left .grad as it was
    loss.backward()                       # and the graph retainable
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 5.0])


def test_a_jacobian_with_an_infinite_entry_is_drawn():
    """sqrt at 0 has an infinite derivative: the view colours the finite entries on their own scale
    and shows inf in a neutral cell (it used to fail on the NaN scale)."""
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    html = torch.jacobian_view(torch.sqrt, x).html()
    assert '<td class="gv-j0">inf</td>' in html and '<td class="gv-j4">0.25</td>' in html
