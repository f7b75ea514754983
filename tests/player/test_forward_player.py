"""The forward-mode player (player/forward.py) and its trace (forward_trace.py): what each frame shows
is what the engine computed, the result is jvp's, and the trace round-trips through JSON."""
from __future__ import annotations

import json
import re
import threading

import numpy as np
import pytest

import gradviz
from gradviz import events
from gradviz.forward_trace import ForwardTrace
from gradviz.player.frames import state_at


def f(x, w):
    h = x.sin() * w
    return (h * 2).sum()


@pytest.fixture
def inputs():
    x = gradviz.tensor([0.5, -1.0, 2.0])
    w = gradviz.tensor([2.0, 3.0, -1.0])
    v = gradviz.tensor([1.0, 0.0, 0.5])
    u = gradviz.tensor([0.0, 1.0, 1.0])
    return (x, w), (v, u)


def test_result_is_what_jvp_returns(inputs):
    primals, tangents = inputs
    anim = gradviz.animate_jvp(f, primals, tangents)
    out, jvp_out = gradviz.func.jvp(f, primals, tangents)
    assert isinstance(anim.result, tuple) and len(anim.result) == 2
    for got, want in zip(anim.result, (out, jvp_out)):
        assert got.dtype == want.dtype and got.shape == want.shape and not got.requires_grad
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    # by hand: d/dt sum(2 sin(x + t v) (w + t u)) = sum(2 (cos x · v · w + sin x · u))
    x, w = (p.numpy() for p in primals)
    v, u = (t.numpy() for t in tangents)
    np.testing.assert_allclose(jvp_out.item(), np.sum(2 * (np.cos(x) * v * w + np.sin(x) * u)), rtol=1e-6)


def test_each_frame_shows_the_tangent_the_engine_computed(inputs):
    primals, tangents = inputs
    heard = []
    with events.listen(lambda e: heard.append(e) if type(e) is events.TangentComputed else None,
                       thread=threading.get_ident()):
        anim = gradviz.animate_jvp(f, primals, tangents)
    steps = anim.trace.tangents
    assert [e.op.name for e in heard] == [anim.trace.node(s.node).name for s in steps] == ["sin", "mul", "mul", "sum"]
    assert len(anim.frames) == 1 + len(steps)
    for frame, step, event in zip(anim.frames[1:], steps, heard):
        assert frame.node == step.node and frame.step == step.index
        assert anim.state(frame.index)[step.node] == "active"
        for slot, t in enumerate(event.tangents_in):
            if t is None:
                assert step.tangents_in[slot] is None
            else:
                np.testing.assert_array_equal(step.tangents_in[slot].values, t.numpy())
        np.testing.assert_array_equal(step.tangents_out[0].values, event.tangents_out[0].numpy())
        # the edges into the op carry the incoming tangents now, labelled with them
        into = [e for e in anim.trace.edges if e.dst == step.node]
        assert into and all(anim.state(frame.index)[e.id] == "carrying" for e in into)
        assert all(frame.labels[e.id] for e in into)
        # the panel writes ṫ_out = J ṫ_in with the local Jacobian's numbers: J · ṫ_in = ṫ_out
        for slot, J in enumerate(step.jacobians):
            if J is not None:
                assert "local Jacobian" in frame.text
        total = sum(np.asarray(J) @ np.asarray(step.tangents_in[s].values, dtype=np.float64).ravel()
                    for s, J in enumerate(step.jacobians) if J is not None)
        np.testing.assert_allclose(total, np.ravel(step.tangents_out[0].values), rtol=1e-6)
    # the seed frame: the inputs, named as func names them, with their tangents
    leaves = {anim.trace.node(n).name: p.values for n, p in anim.trace.seeds}
    assert set(leaves) == {"x", "w"}
    np.testing.assert_array_equal(leaves["x"], tangents[0].numpy())
    assert "ẋ" in anim.frames[0].caption and "ẇ" in anim.frames[0].caption


def test_learner_names_and_symbols(inputs):
    primals, tangents = inputs
    anim = gradviz.animate_jvp(f, primals, tangents)
    mul = anim.trace.node(anim.trace.tangents[1].node)
    assert mul.tensor_name == "h"            # the local variable of f that held it
    # an unnamed result gets one symbol, t₁ as in backward, that the op making it and the op reading it both write
    sin = anim.trace.node(anim.trace.tangents[0].node)
    assert sin.out_names == ("t₁",)
    assert "ṫ₁ = " in anim.frames[1].caption and anim.frames[2].caption.split("; ")[1].startswith("ṫ₁ = ")
    assert "ḣ" in anim.frames[2].caption      # ṫ_out written with the learner's name
    assert [n.name for n in anim.trace.nodes if n.kind == "output"] == ["out"]
    # the last frame writes the output's tangent on its edge
    last = anim.frames[-1]
    out = next(n for n in anim.trace.nodes if n.kind == "output")
    assert state_at(anim.frames, last.index)[out.id] == "written"


def test_trace_round_trips_and_replays(inputs, tmp_path):
    primals, tangents = inputs
    anim = gradviz.animate_jvp(f, primals, tangents)
    data = json.loads(json.dumps(anim.trace.to_json()))
    again = ForwardTrace.from_json(data)
    assert again.to_json() == anim.trace.to_json()
    replayed = gradviz.player.forward.animation_of(again)
    assert [fr.caption for fr in replayed.frames] == [fr.caption for fr in anim.frames]


def test_saves_one_offline_file_and_shows_inline(inputs, tmp_path):
    primals, tangents = inputs
    anim = gradviz.animate_jvp(f, primals, tangents)
    page = anim.save(tmp_path / "jvp.html").read_text(encoding="utf-8")
    assert "arrow thickness: size of the tangent, ×10 per step" in page
    assert not re.search(r'(?:src|href)="(?!#|data:)', page)   # nothing to fetch: no src or href but its own
    assert "gv-carrying" in page                 # the stylesheet knows the forward edge states
    assert 'class="gv-key"' in anim._repr_html_() and "backward: arrows" not in anim._repr_html_()
    assert repr(anim).startswith("<gradviz.Animation: 5 frames (forward mode: 4 JVPs)")


def test_record_forward_records_functional_jvp_and_dual_tensors():
    x = gradviz.tensor([0.3, 0.7])
    v = gradviz.tensor([1.0, -1.0])
    with gradviz.record_forward({"x": v}) as rec:
        out, jv = gradviz.autograd.functional.jvp(lambda a: (a.tanh() * a).sum(), x, v)
    names = [rec.trace.node(s.node).name for s in rec.trace.tangents]
    assert names == ["tanh", "mul", "sum"]
    assert [rec.trace.node(n).name for n, _ in rec.trace.seeds] == ["x"]
    np.testing.assert_allclose(rec.trace.tangents[-1].tangents_out[0].values, jv.numpy(), rtol=1e-6)
    assert len(rec.animation().frames) == 4
    # dual tensors made by hand
    import gradviz.autograd.forward_ad as fwAD
    with gradviz.record_forward({"x": v}) as rec, fwAD.dual_level():
        y = fwAD.make_dual(x, v).exp() * 3
        tangent = fwAD.unpack_dual(y).tangent
    assert [rec.trace.node(s.node).name for s in rec.trace.tangents] == ["exp", "mul"]
    np.testing.assert_allclose(rec.trace.tangents[-1].tangents_out[0].values, tangent.numpy())
    assert [n.kind for n in rec.trace.nodes].count("output") == 1   # the end no op consumed


def test_has_aux_returns_what_jvp_returns(inputs):
    primals, tangents = inputs

    def g(x, w):
        h = x.sin() * w
        return h.sum(), {"h": h}

    anim = gradviz.animate_jvp(g, primals, tangents, has_aux=True)
    want = gradviz.func.jvp(g, primals, tangents, has_aux=True)
    assert len(anim.result) == 3 and set(anim.result[2]) == {"h"}
    for got, exp in zip((anim.result[0], anim.result[1], anim.result[2]["h"]), (want[0], want[1], want[2]["h"])):
        np.testing.assert_array_equal(got.numpy(), exp.numpy())
    assert [n.name for n in anim.trace.nodes if n.kind == "output"] == ["out"]   # aux is not a result


def test_bad_input_raises_jvp_errors(inputs):
    primals, _ = inputs
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same shape"):
        gradviz.animate_jvp(f, primals, (gradviz.ones(2), gradviz.ones(3)))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        gradviz.animate_jvp(f, list(primals), primals)
    assert not events.listening()          # no recorder is left listening
