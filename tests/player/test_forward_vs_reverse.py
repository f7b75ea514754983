"""forward_vs_reverse: the Jacobian built both ways on one graph, n forward passes against m backward passes."""
from __future__ import annotations

import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

W = [[0.5, 0.3, -0.4], [0.2, 0.0, 0.6]]


def f(x):
    h = (gradviz.tensor(W, dtype=x.dtype) @ x).tanh()
    return h * 2


def test_both_ways_give_torchs_jacobian_one_pass_per_column_and_per_row():
    x = gradviz.tensor([0.5, -1.0, 2.0])
    race = gradviz.forward_vs_reverse(f, x)
    assert race.columns.shape == race.rows.shape == (2, 3)
    np.testing.assert_allclose(race.columns, race.rows, rtol=1e-6)
    # n = 3 forward passes (columns), then m = 2 backward passes (rows)
    assert [fr.title for fr in race.frames] == ["forward pass 1/3 · column 0", "forward pass 2/3 · column 1",
                                                "forward pass 3/3 · column 2", "backward pass 1/2 · row 0",
                                                "backward pass 2/2 · row 1"]
    edges = [e.id for e in race.trace.edges]
    for k, frame in enumerate(race.frames):
        state = race.state(k)
        assert set(frame.labels) == set(edges)     # every edge carries this pass's tangent or gradient
        kind = "carrying" if k < 3 else "flowing"  # forward arrowheads, then turned round for backward
        assert all(state[e] == kind for e in edges)
    # the panel fills J: after forward pass k, k + 1 columns; after backward pass i, i + 1 rows
    assert race.frames[1].text.count('class="gv-unfilled"') == 2 + 6
    assert race.frames[3].text.count('class="gv-unfilled"') == 3
    last = race.frames[4].text
    assert "forward mode · 3 of 3 passes" in last and "reverse mode · 2 of 2 passes" in last
    # the edge into x in a backward pass carries row i of J; in forward pass j, the input's tangent is e_j
    into_mv = next(e for e in race.trace.edges if race.trace.node(e.src).kind == "leaf")
    assert race.frames[0].labels[into_mv.id] == "[1.0, 0.0, 0.0]"
    row = ", ".join(gradviz.formatting.number(v) for v in race.rows[1])
    assert race.frames[4].labels[into_mv.id] == f"[{row}]"
    assert "reverse mode is cheaper" in race.frames[0].text
    # intermediate tensors keep the learner's names
    assert any(n.tensor_name == "h" for n in race.trace.nodes)


@needs_torch
def test_jacobian_matches_torch():
    torch = real_torch
    x = [0.3, -0.2, 0.9]
    race = gradviz.forward_vs_reverse(f, gradviz.tensor(x, dtype=gradviz.float64))
    want = torch.autograd.functional.jacobian(lambda t: (torch.tensor(W, dtype=torch.float64) @ t).tanh() * 2,
                                              torch.tensor(x, dtype=torch.float64))
    np.testing.assert_allclose(race.rows, want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(race.columns, want.numpy(), rtol=1e-12)


def test_more_outputs_than_inputs_favours_forward_mode(tmp_path):
    race = gradviz.forward_vs_reverse(lambda x: gradviz.stack([x.sin(), x.cos(), x * x]).reshape(-1),
                                      gradviz.tensor([0.5, 1.5]))
    assert race.columns.shape == (6, 2) and len(race.frames) == 2 + 6
    assert "forward mode is cheaper" in race.frames[0].text
    page = race.save(tmp_path / "race.html").read_text(encoding="utf-8")
    assert "forward passes carry a tangent, backward passes a gradient" in page


def test_bad_input():
    with pytest.raises(TypeError, match="argument 'x' must be Tensor, not list"):
        gradviz.forward_vs_reverse(f, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="at most 16 each"):
        gradviz.forward_vs_reverse(lambda x: x * 2, gradviz.ones(17))
