"""The step panel's parts: tensors as grids and heatmaps, LaTeX as MathML, the caller's names."""
import re

import numpy as np
import pytest

import gradviz as torch
from gradviz import naming
from gradviz.player import grids
from gradviz.render import latex


def cells(html: str) -> list:
    return re.findall(r'<td class="gv-j(-?\d)[^"]*">([^<]*)</td>', html)


# -- grids ---------------------------------------------------------------------------
def test_small_matrix_is_a_grid_of_its_numbers():
    g = np.array([[1.0, -2.0, 0.0], [0.5, 4.0, -4.0]])
    html = grids.tensor(g)
    found = cells(html)
    assert [v for _, v in found] == ["1.0", "-2.0", "0.0", "0.5", "4.0", "-4.0"]
    assert html.count("<tr>") == 2                      # two rows, as the tensor has
    levels = [int(k) for k, _ in found]
    assert levels == [1, -2, 0, 0 + 1, 4, -4]           # one diverging scale: ±4 at ±max|g|


def test_levels_share_the_scale_given():
    html = grids.tensor(np.array([1.0, 2.0]), scale=8.0)
    assert [int(k) for k, _ in cells(html)] == [1, 1]   # small next to a larger tensor of the step
    assert grids.level(-8.0, 8.0) == -4 and grids.level(0.0, 8.0) == 0 and grids.level(np.nan, 1.0) == 0


def test_scalar_and_vector_shapes():
    assert len(cells(grids.tensor(np.array(3.0)))) == 1
    v = grids.tensor(np.arange(6.0))
    assert v.count("<tr>") == 1 and len(cells(v)) == 6
    cube = grids.tensor(np.arange(24.0).reshape(2, 3, 4))      # 6 rows of 4: leading dims stacked
    assert "<details" not in cube and cube.count("<tr>") == 6


def test_large_tensor_is_a_heatmap_with_shape_and_range_and_expands_to_the_grid():
    a = np.linspace(-3, 5, 6 * 40).reshape(6, 40)
    html = grids.tensor(a)
    assert html.startswith('<details class="gv-tensor gv-big">')
    assert "(6, 40) from -3.0 to 5.0" in re.sub(r"<[^>]+>", "", html)
    svg = re.search(r'<svg class="gv-thumb" viewBox="0 0 (\d+) (\d+)"', html)
    assert (int(svg.group(1)), int(svg.group(2))) == (16, 6)   # at most 16 blocks a side
    assert len(cells(html)) == a.size                          # the expanded grid holds every value
    # the heatmap's blocks run from blue (negative) to red (positive)
    assert 'class="gv-j-2"' in html and 'class="gv-j4"' in html


def test_a_heatmap_draws_each_cell_once_in_the_path_of_its_colour_in_order():
    blocks = np.random.default_rng(0).standard_normal((16, 12))
    blocks[3, 4], blocks[0, 0] = 0.0, np.nan
    svg = grids.thumbnail(blocks, 2.0)
    paths = re.findall(r'<path class="gv-j(-?\d)" d="([^"]*)"/>', svg)
    levels = grids.levels(blocks, 2.0)
    assert [int(k) for k, _ in paths] == sorted(set(levels.ravel().tolist()))   # one path a colour, in order
    for k, d in paths:
        drawn = [(int(i), int(j)) for j, i in re.findall(r"M(\d+) (\d+)h1v1h-1z", d)]
        assert drawn == [tuple(c) for c in np.argwhere(levels == int(k)).tolist()]   # row by row
    assert sum(len(re.findall("M", d)) for _, d in paths) == blocks.size


def test_a_preview_of_a_large_tensor_is_its_heatmap_and_range():
    from gradviz.previews import Preview
    a = np.linspace(-1.0, 2.0, 600).reshape(300, 2)
    p = Preview.of(a)
    assert p.values is None and p.thumb.shape == (16, 2)
    html = grids.tensor(p)
    assert "(300, 2) from -1.0 to 2.0, mean 0.5" in re.sub(r"<[^>]+>", "", html) and "<svg" in html and "<details" not in html
    back = Preview.from_json(p.to_json())                       # the heatmap survives a saved Trace
    assert np.allclose(back.thumb, p.thumb)


def test_running_sum_is_tensors_added_together():
    t1, t2 = np.array([[1.0, 2.0]]), np.array([[3.0, -1.0]])
    html = grids.equation([t1, t2], t1 + t2)
    assert html.count('class="gv-op">+<') == 1 and html.count('class="gv-op">=<') == 1
    assert [v for _, v in cells(html)] == ["4.0", "1.0", "1.0", "2.0", "3.0", "-1.0"]   # the total first


def test_highlighted_row_of_a_jacobian():
    html = grids.grid(np.eye(3), highlight_rows=(1,))
    rows = html.split("<tr")[1:]
    assert [r.startswith(' class="gv-hl"') for r in rows] == [False, True, False]


# -- LaTeX -> MathML ------------------------------------------------------------------
def test_latex_becomes_mathml_without_raw_latex():
    out = latex.mathml(r"\bar{g} \odot b \odot a^{b-1}")
    assert out.startswith("<math") and "<msup>" in out and "\\" not in out and "xmlns" not in out


def test_names_are_inserted_escaped_after_conversion():
    out = latex.mathml(r"\operatorname{grad}_{" + latex.name(0) + "} = 2 " + latex.name(1),
                       names=("z_1", "<img src=x onerror=alert(1)>"))
    assert "<mi>z_1</mi>" in out
    assert "<img" not in out and "&lt;img" in out


def test_unreadable_latex_is_escaped_text():
    out = latex.mathml(r"\left( a < b")
    assert out == '<span class="gv-math-fallback">\\left( a &lt; b</span>'


# -- the caller's names ------------------------------------------------------------------
def test_caller_names_finds_unambiguous_tensors():
    z1 = torch.ones(2, requires_grad=True)
    loss = (z1 * 2).sum()
    alias_a = alias_b = torch.zeros(1)  # noqa: F841  (two names: ambiguous, left out)
    _hidden = torch.ones(1)  # noqa: F841
    found = naming.caller_names(naming.is_tensor)
    assert found["z1"] is z1 and found["loss"] is loss
    assert "alias_a" not in found and "alias_b" not in found and "_hidden" not in found


def test_given_names_win():
    x = torch.ones(1)
    assert naming.with_caller_names({"mine": x}) == {"mine": x}
    assert naming.with_caller_names(None)["x"] is x


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (1, 4), (8, 8), (9, 2)])
def test_every_value_appears_once_in_small_grids(shape):
    a = np.random.default_rng(0).standard_normal(shape)
    html = grids.tensor(a)
    if grids.fits_grid(shape):
        assert len(cells(html)) == max(a.size, 1)
    else:
        assert "<details" in html


# -- the code listing ---------------------------------------------------------------------
def _fake_trace(code=None):
    from types import SimpleNamespace as NS
    nodes = [NS(id="n0", kind="leaf", source=("/home/me/train.py", 11, "x = randn(3)")),
             NS(id="n1", kind="op", source=("/home/me/train.py", 12, "h = x @ w")),
             NS(id="n2", kind="op", source=("/home/me/train.py", 14, "loss = h.sum()  # <done>")),
             NS(id="n3", kind="op", source=("/tmp/ipykernel_81/3158.py", 2, "y = x * 2")),
             NS(id="n4", kind="op", source=None)]
    return NS(nodes=nodes, code=code)


def test_listing_keys_each_node_to_its_line():
    from gradviz.player import codeview
    trace = _fake_trace()
    keys = codeview.line_keys(trace)
    assert keys == {"n0": "0:11", "n1": "0:12", "n2": "0:14", "n3": "1:2"}
    html = codeview.listing(trace)
    assert 'data-line="0:12"' in html and 'data-line="1:2"' in html
    assert "⋮" in html                          # lines 12 and 14 are not neighbours
    assert "&lt;done&gt;" in html and "<done>" not in html
    assert "train.py" in html and "/home/me" not in html
    assert "notebook cell" in html and "3158" not in html


def test_a_folded_box_is_keyed_to_the_lines_that_made_its_ops():
    from gradviz.player import codeview
    keys = codeview.line_keys(_fake_trace(), {"c0": {"n0", "n2", "n1", "n4"}, "c1": {"n0", "n4"}, "c2": {"n3"}})
    assert keys["c0"] == ["0:12", "0:14"]   # its ops' lines in the listing's order, not its leaf's
    assert keys["c1"] == "0:11"             # no op with a line: its leaf's
    assert keys["c2"] == "1:2"


def test_listing_shows_the_recorded_block_around_the_lines():
    from gradviz.player import codeview
    code = {"/home/me/train.py": (11, ["x = randn(3)", "h = x @ w", "print(h)", "loss = h.sum()"])}
    html = codeview.listing(_fake_trace(code))
    assert html.count('class="gv-line') == 4 + 1 and "⋮" not in html.split("notebook cell")[0]
    assert html.count("gv-made") == 4           # the four lines that made nodes stand out


def test_no_sources_no_listing():
    from types import SimpleNamespace as NS
    from gradviz.player import codeview
    assert codeview.listing(NS(nodes=[NS(id="n0", kind="op", source=None)], code=None)) == ""


# -- every record's LaTeX ----------------------------------------------------------------
def _inputs_of(op) -> int:
    return len(op.vjp_formulas) if op.arg_names == ("tensors",) else len(op.arg_names)


def test_every_differentiable_record_has_latex_that_converts():
    from gradviz.ops.display_math import PLACED
    from gradviz.ops.registry import ops
    missing, bad = [], []
    for key, op in ops().items():
        if op.vjp is None:
            continue
        if not op.latex:
            missing.append(key)
            continue
        allowed = {"c"} | {f"c{k}" for k in range(1, len(op.out_symbols))} | PLACED | {str(i) for i in range(_inputs_of(op))} | set(op.param_names) | ({"*"} if op.arg_names == ("tensors",) else set())
        for template in (op.latex,) + op.vjp_latex:
            unknown = latex.markers(template) - allowed
            out = latex.mathml(latex.fill(template, [latex.name(i) for i in range(_inputs_of(op))], "c", {}),
                               names=tuple("abcdefgh"))
            if unknown or "gv-math-fallback" in out or "$" in out:
                bad.append((key, template, unknown))
        if len(op.vjp_latex) != len(op.vjp_formulas):
            bad.append((key, "one LaTeX VJP per input", len(op.vjp_latex), len(op.vjp_formulas)))
    assert not bad, bad
    assert not missing, missing


def test_formulas_show_the_learners_names_and_constants():
    from gradviz.player.frames import build_frames
    from gradviz.tracing import record_backward
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = h.pow(3)
    loss = y.sum()
    trace = record_backward([loss], names={"x": x, "h": h, "y": y, "loss": loss})
    texts = {f.node: f.text for f in build_frames(trace)}
    by_name = {n.name: n.id for n in trace.nodes if n.kind == "op"}
    mul = texts[by_name["MulBackward0"]]
    head = re.search(r"<math.*?</math>", mul).group(0)
    assert latex.text(head) == "h = 2x"                                  # a constant factor is a coefficient
    assert "<mn>2</mn>" in head and "<mi>x</mi>" in head and "<mi>h</mi>" in head
    pow_ = texts[by_name["PowBackward0"]]
    assert "<msup><mrow><mi>h</mi></mrow><mrow><mrow><mn>3</mn></mrow></mrow></msup>" in pow_   # y = h³
    assert "\\" not in re.sub(r"<[^>]+>", "", pow_)                     # no raw LaTeX reaches the page


def _said(text: str) -> str:
    """A panel's words, each formula read as M."""
    return re.sub(r"<[^>]+>", "", re.sub(r"<math.*?</math>", "M", text))


def test_the_forward_step_names_every_tensor_its_formula_reads():
    """t₁ = x w1 is computed from x and w1, though x needs no grad and so has no edge in the graph."""
    x = torch.randn(5, 4)
    w1 = torch.randn(4, 8, requires_grad=True)
    anim = torch.animate((x @ w1 / 2).sum(), names={"x": x, "w1": w1})
    said = [_said(f.text) for f in anim.frames if f.title.startswith("forward")]
    assert "computes M from x and w1;" in said[0], said[0]
    assert "computes M from the output of MmBackward0 (t₁);" in said[1], said[1]   # a constant is no tensor


def test_a_broadcast_note_names_the_tensor_that_was_broadcast():
    """The tensor t₁ was broadcast, not the node MeanBackward1 that made it; a leaf by its name."""
    z = torch.randn(8, 4, requires_grad=True)
    b = torch.zeros(4, requires_grad=True)
    anim = torch.animate(((z - z.mean(0)) + b).sum(), names={"z": z, "b": b})
    notes = sorted(re.findall(r"(\S+) was broadcast in the forward pass", _said(" ".join(f.text for f in anim.frames))))
    assert notes == ["b", "t₁"], notes


def test_a_running_sum_calls_the_tensor_by_its_symbol():
    """h feeds two ops: its running sum is ∂L/∂h, as the rest of the panel calls it, not
    ∂L/∂(output of TanhBackward0)."""
    x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    h = torch.tanh(x)
    anim = torch.animate((h * 3 + h.exp()).sum(), names={"x": x, "h": h})
    heads = [m.strip() for f in anim.frames for m in re.findall(r"running sum</span> ([^<]*)←", f.text)]
    assert heads == ["∂L/∂h", "∂L/∂h"], heads


def test_an_eight_wide_grid_writes_long_numbers_in_fewer_characters():
    html = grids.tensor(np.array([[-0.0009205, -5.216e-05, 0.5, 12345678901.0, 1.0, 2.0, 3.0, 4.0]]))
    assert [v for _, v in cells(html)][:4] == ["-9.205e-4", "-5.216e-5", "0.5", "1.235e10"]
    assert [v for _, v in cells(grids.tensor(np.array([-0.0009205, 1.0])))] == ["-0.0009205", "1.0"]
    assert "123456789012" in grids.tensor(np.array([123456789012] + [1] * 7))   # an integer keeps its digits
