"""The Trace contract: plain values only, one Recorder built from events, JSON round-trips,
recording leaves the user's state alone, and the step panel names each gradient after the
input it belongs to (symbols come from the op records, never from parsing formulas)."""
import json
import re
import threading
import warnings

import numpy as np
import pytest

import gradviz as torch
from gradviz import events
from gradviz.player import animate
from gradviz.player.frames import build_frames
from gradviz.records import NodeRecord
from gradviz.tracing import Recorder, Trace, build_trace, outputs_of, record_backward


def _graph():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], requires_grad=True)
    c = torch.tensor(0.5, requires_grad=True)
    x = (a * b).tanh()
    parts = x.split(1, dim=0)
    loss = (parts[0] * 2).sum() + (parts[1] ** 3).mean() * c
    return {"a": a, "b": b, "c": c}, loss


def _plain_values(obj, path="trace"):
    """Every value reachable from a dataclass tree is plain data: no engine object anywhere."""
    allowed = (str, int, float, bool, type(None), np.ndarray, np.generic)
    if isinstance(obj, allowed):
        return
    if isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _plain_values(v, f"{path}[{i}]")
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            _plain_values(k, f"{path} key")
            _plain_values(v, f"{path}[{k!r}]")
        return
    if hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            _plain_values(getattr(obj, name), f"{path}.{name}")
        return
    raise AssertionError(f"{path} holds a {type(obj).__name__}")


def _same_html(a, b) -> bool:
    uid = re.compile(r"gv-player-\d+-\d+")
    return uid.sub("uid", a.html()) == uid.sub("uid", b.html())


# -- plain values, JSON -------------------------------------------------------------------------
def test_a_trace_holds_plain_values_only():
    names, loss = _graph()
    anim = animate(loss, names=names)
    _plain_values(anim.trace)
    assert not hasattr(anim.trace, "_by_engine")
    assert "ref" not in NodeRecord.__dataclass_fields__


def test_json_round_trip_rebuilds_the_same_player():
    names, loss = _graph()
    live = animate(loss, names=names)
    text = json.dumps(live.trace.to_json())
    loaded = Trace.from_json(json.loads(text))
    assert loaded.to_json() == live.trace.to_json()
    again = animate(loaded)
    assert _same_html(live, again)
    assert [f.caption for f in again.frames] == [f.caption for f in live.frames]
    assert any("local Jacobian" in f.text for f in again.frames)   # recorded with the steps, not recomputed


def test_json_round_trip_of_a_torch_trace():
    real = pytest.importorskip("torch")
    from gradviz.torch_bridge import record_torch_backward
    a = real.tensor([1.0, 2.0], requires_grad=True)
    loss = (a * a.exp()).sum()
    trace = record_torch_backward(loss, params={"a": a})
    loaded = Trace.from_json(json.loads(json.dumps(trace.to_json())))
    assert _same_html(animate(trace), animate(loaded))


def test_json_keeps_non_finite_values_and_dtypes():
    x = torch.tensor([1.0, float("inf"), float("nan")], requires_grad=True, dtype=torch.float64)
    trace = record_backward([(x * 1).sum()])
    loaded = Trace.from_json(json.loads(json.dumps(trace.to_json())))
    leaf = next(n for n in loaded.nodes if n.kind == "leaf")
    assert leaf.value.dtype == "float64" and leaf.value.values.dtype == np.float64
    assert np.isinf(leaf.value.values[1]) and np.isnan(leaf.value.values[2])


def test_unknown_format_version_is_refused():
    with pytest.raises(ValueError, match="format version"):
        Trace.from_json({"version": 99})


# -- one builder -------------------------------------------------------------------------------
def test_a_live_recording_and_a_replay_give_the_same_trace():
    with Recorder() as rec:
        a = _leaf([1.0, 2.0], "a")
        b = _leaf([3.0, 4.0], "b")
        loss = (a * b + a.exp()).sum()
    live = rec.trace(outputs_of([loss]))
    replayed = build_trace([loss])
    assert live.to_json() == replayed.to_json()


def test_edges_carry_output_nr_and_static_broadcast_axes():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    first, second = x.unbind(0)
    bias = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (second * 3).sum() + (first + torch.zeros(3, 2) + bias).sum()
    trace = build_trace([y])
    unbind = next(n for n in trace.nodes if n.name == "UnbindBackward0")
    out_nrs = sorted(e.output_nr for e in trace.edges if e.src == unbind.id)
    assert out_nrs == [0, 1]
    adds = [n.id for n in trace.nodes if n.name == "AddBackward0"]
    summed = [e.axes for e in trace.edges if e.dst in adds and e.axes]
    assert (0,) in summed


def test_constants_are_recorded():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = ((x * 2) ** 3).sum(dim=0, keepdim=True)
    trace = build_trace([y])
    by_name = {n.name: dict(n.constants) for n in trace.nodes if n.kind == "op"}
    assert by_name["MulBackward0"] == {"1": 2.0}          # input slot 1 is the constant 2
    assert by_name["PowBackward0"] == {"exponent": 3}
    assert by_name["SumBackward1"]["keepdim"] is True


def test_source_tracking_records_the_user_line():
    torch.set_source_tracking(True)
    try:
        with Recorder() as rec:
            x = torch.tensor([1.0], requires_grad=True)
            y = x * 2  # the line we look for
    finally:
        torch.set_source_tracking(False)
    trace = rec.trace(outputs_of([y]))
    (mul,) = [n for n in trace.nodes if n.kind == "op"]
    filename, line, text = mul.source
    assert filename == __file__ and text == "y = x * 2  # the line we look for"
    with Recorder() as rec:
        z = x * 2
    assert next(n for n in rec.trace(outputs_of([z])).nodes if n.kind == "op").source is None


# -- the bus -----------------------------------------------------------------------------------
def test_a_recorder_hears_only_its_own_thread():
    seen_elsewhere = []

    def other():
        u = torch.tensor([1.0], requires_grad=True)
        seen_elsewhere.append((u * 5).sum())

    with Recorder() as rec:
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        x = torch.tensor([1.0], requires_grad=True)
        x * 2
    assert [info.name for info in rec.nodes.values()] == ["MulBackward0"]


def test_a_listener_that_raises_warns_and_breaks_nothing():
    def broken(event):
        raise ValueError("boom")

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with events.listen(broken), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = (x * 3).sum()
        y.backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert caught and all("boom" in str(w.message) for w in caught)


# -- recording leaves state alone ----------------------------------------------------------------
def test_animate_leaves_grad_and_the_graph_alone():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    Q = 3 * a ** 3
    animate(Q, gradient=torch.ones(2))
    assert a.grad is None
    Q.backward(torch.ones(2))
    assert a.grad.tolist() == [36.0, 81.0]


def test_animate_restores_an_existing_grad_object():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    a.grad = torch.tensor([1.0, 1.0])
    grad = a.grad
    c = a * a
    c.retain_grad()
    c.grad  # noqa: B018  (None: not computed yet)
    animate(c.sum())
    assert a.grad is grad and grad.tolist() == [1.0, 1.0]
    assert c.grad is None


def test_record_torch_backward_leaves_grad_alone():
    real = pytest.importorskip("torch")
    from gradviz.torch_bridge import record_torch_backward
    a = real.tensor([2.0, 3.0], requires_grad=True)
    a.grad = real.tensor([1.0, 1.0])
    grad = a.grad
    Q = 3 * a ** 3
    record_torch_backward(Q, gradient=real.ones(2))
    assert a.grad is grad and a.grad.tolist() == [1.0, 1.0]
    Q.backward(real.ones(2))
    assert a.grad.tolist() == [37.0, 82.0]


# -- the step panel names each gradient after its input ---------------------------------------------
def _caption(root, name, names):
    anim = animate(root, names=names, forward=False)
    frame = next(f for f in anim.frames if f.phase == "backward" and anim.trace.node(f.node).name == name)
    return frame.caption, frame.text


def _leaf(values, name):
    t = torch.tensor(values, requires_grad=True)
    t.name = name
    return t


def test_panel_layer_norm_names_weight_and_bias():
    x, w, b = _leaf([[1.0, 2.0, 4.0], [0.0, 1.0, 3.0]], "x"), _leaf([1.0, 2.0, 3.0], "w"), _leaf([0.5, 0.0, 1.0], "b")
    y = torch.nn.functional.layer_norm(x, (3,), w, b).pow(2).sum()
    caption, _ = _caption(y, "NativeLayerNormBackward0", {})
    assert "→ x: ∂L/∂x = r ⊙ (ĝ − mean ĝ − x̂ ⊙ mean(ĝ ⊙ x̂)) = " in caption and ", where ĝ = ḡ ⊙ w" in caption
    assert "→ w: ∂L/∂w = Σ ḡ ⊙ x̂ = " in caption
    assert "→ b: ∂L/∂b = Σ ḡ = " in caption


def test_panel_batch_norm_names_weight_and_bias():
    x, w, b = _leaf([[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]], "x"), _leaf([1.0, 2.0], "w"), _leaf([0.5, 0.0], "b")
    y = torch.nn.functional.batch_norm(x, None, None, w, b, training=True).pow(2).sum()
    caption, _ = _caption(y, "NativeBatchNormBackward0", {})
    assert "→ w: ∂L/∂w = Σ ḡ ⊙ x̂ = " in caption and "→ b: ∂L/∂b = Σ ḡ = " in caption


@pytest.mark.parametrize("fn, name, rows", [
    (lambda a, t1, t2: torch.addcmul(a, t1, t2, value=2.0), "AddcmulBackward0",
     ["→ a: ∂L/∂a = ḡ", "→ t1: ∂L/∂t1 = 2ḡ ⊙ t2", "→ t2: ∂L/∂t2 = 2ḡ ⊙ t1"]),
    (lambda a, t1, t2: torch.addcdiv(a, t1, t2, value=2.0), "AddcdivBackward0",
     ["→ a: ∂L/∂a = ḡ", "→ t1: ∂L/∂t1 = 2ḡ/t2", "→ t2: ∂L/∂t2 = −2(ḡ ⊙ t1)/t2²"]),
    (lambda a, t1, t2: torch.clamp(a, min=t1, max=t2), "ClampBackward0",
     ["→ a: ∂L/∂a = ḡ ⊙ [t1 ≤ a ≤ t2]", "→ t1: ∂L/∂t1 = ḡ ⊙ [a < t1]", "→ t2: ∂L/∂t2 = ḡ ⊙ [a > t2]"]),
    (lambda a, t1, t2: torch.lerp(a, t1, t2), "LerpBackward1",
     ["→ a: ∂L/∂a = ḡ ⊙ (1 − t2)", "→ t1: ∂L/∂t1 = ḡ ⊙ t2", "→ t2: ∂L/∂t2 = ḡ ⊙ (t1 − a)"]),
    (lambda a, t1, t2: torch.where(t2 > 0.5, a, t1), "WhereBackward0",
     ["→ a: ∂L/∂a = ḡ ⊙ cond", "→ t1: ∂L/∂t1 = ḡ ⊙ ¬cond"]),
])
def test_panel_three_input_ops(fn, name, rows):
    a, t1, t2 = _leaf([0.1, 2.0, 0.5], "a"), _leaf([0.3, 0.2, 0.4], "t1"), _leaf([0.6, 0.9, 0.3], "t2")
    caption, _ = _caption(fn(a, t1, t2).sum(), name, {})
    for row in rows:
        assert row + " = " in caption, (row, caption)


def test_panel_index_add_and_scatter_add_name_src():
    a, src = _leaf([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], "a"), _leaf([[1.0, 1.0], [2.0, 2.0]], "src")
    y = a.index_add(0, torch.tensor([0, 2]), src, alpha=3.0)
    caption, _ = _caption(y.sum(), "IndexAddBackward0", {})
    assert "→ a: ∂L/∂a = ḡ = " in caption and "→ src: ∂L/∂src = 3ḡ[idx] = " in caption
    a, src = _leaf([0.0, 1.0, 2.0], "a"), _leaf([5.0, 6.0], "src")
    y = a.scatter_add(0, torch.tensor([2, 0]), src)
    caption, _ = _caption(y.sum(), "ScatterAddBackward0", {})
    assert "→ a: ∂L/∂a = ḡ = " in caption and "→ src: ∂L/∂src = gather(ḡ, 0, idx) = " in caption


def test_panel_a_plus_a_sends_both_gradients_to_a():
    a = _leaf([1.0, 2.0], "a")
    b = a + a
    caption, text = _caption(b.sum(), "AddBackward0", {"a": a, "b": b})
    assert caption.count("→ a: ∂L/∂a = ḡ = [1.0, 1.0]") == 2       # one gradient per use of a
    plain = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text))
    assert "a is used 2 times by this op (as a and a)" in plain
    assert "b &#x0003D; a &#x0002B; a" in plain                    # the formula reads b = a + a
    assert plain.count("running sum") == 1


def test_frames_read_only_the_trace():
    names, loss = _graph()
    trace = record_backward([loss], names=names, jacobians=True)
    loaded = Trace.from_json(json.loads(json.dumps(trace.to_json())))
    live_frames, loaded_frames = build_frames(trace), build_frames(loaded)
    assert [f.to_json() for f in live_frames] == [f.to_json() for f in loaded_frames]


# -- the CLI on a script that already ran backward ---------------------------------------------------
SCRIPT = """
import gradviz as torch
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor(0.5, requires_grad=True)
loss = ((torch.ones(2, 3) * w).sum(1) + b).pow(2).mean()
loss.backward()
"""


def test_cli_animate_a_script_that_already_called_backward(tmp_path, capsys):
    from gradviz import cli
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    out = tmp_path / "loss.html"
    assert cli.main(["animate", str(script), "-o", str(out)]) == 0
    page = out.read_text()
    assert "PowBackward0" in page and "w.grad" in page      # the script's own backward, as it ran
    assert "7 backward steps" in capsys.readouterr().out     # Mean, Pow, Add, Sum, Mul, two AccumulateGrad


def test_cli_animate_a_torch_script_records_the_backward_it_calls(tmp_path, capsys):
    # the script's own loss.backward() is the one recorded (it no longer frees the graph first)
    pytest.importorskip("torch")
    from gradviz import cli
    script = tmp_path / "model.py"
    script.write_text(SCRIPT.replace("import gradviz as torch", "import torch"))
    assert cli.main(["animate", str(script), "-o", str(tmp_path / "x.html")]) == 0
    out = capsys.readouterr().out
    assert "7 backward steps" in out and "recorded backward call 1 (backward() at model.py:6)" in out