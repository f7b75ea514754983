"""Default folding: a drawing that would exceed a few screens folds, and says so.

Generated graphs of about 100, 300 and 2,000 nodes (a long chain, an MLP of Linear -> ReLU
modules, a wide fan-in, a comb of adds) fold by default until the estimated drawing fits the
budget of render/size.py; every hidden node is in a box; small graphs never fold; explicit
max_nodes= / collapse= keep their meaning.
"""
from __future__ import annotations

import re

import pytest

import gradviz as torch
import gradviz.nn as nn
from gradviz.render import draw
from gradviz.render.collapse import relative_names, wrap_items
from gradviz.render.dot import NOTE_WIDTH
from gradviz.render.size import SMALL, Budget


def chain(n):
    x = torch.randn(3, requires_grad=True)
    y = x
    for _ in range(n - 3):
        y = y * 1.01
    return y.sum(), None


def mlp(n):
    torch.manual_seed(0)
    layers = []
    for _ in range(max(1, n // 7)):           # a Linear and a ReLU: 7 nodes
        layers += [nn.Linear(4, 4), nn.ReLU()]
    model = nn.Sequential(*layers)
    return model(torch.randn(2, 4)).sum(), model


def fan(n):
    xs = [torch.randn(2, requires_grad=True) for _ in range(n // 3)]
    return torch.stack([x * 2.0 for x in xs]).sum(), None


def comb(n):
    xs = [torch.randn(2, requires_grad=True) for _ in range(n // 3)]
    s = xs[0]
    for x in xs[1:]:
        s = s + x
    return s.sum(), None


def accounted(diagram):
    """Every trace node is drawn or hidden in exactly one drawn box, and each box holds what maps to it."""
    view = diagram.view
    drawn = set(view.nodes)
    boxes = {g.id: g for g in view.groups}
    for node in diagram.trace.nodes:
        owner = view.owner.get(node.id)
        assert (node.id in drawn) != (owner is not None), node.id
        if owner is not None:
            assert owner in boxes and node.id in boxes[owner].members
    assert sum(len(g.members) for g in view.groups) == view.hidden


@pytest.mark.parametrize("build", [chain, mlp, fan, comb])
@pytest.mark.parametrize("n", [100, 300, 2000])
def test_a_big_drawing_folds_until_its_estimate_fits(build, n):
    loss, model = build(n)
    diagram = draw(loss, names=model)
    assert len(diagram.trace.nodes) >= n * 0.95
    assert diagram.view.fitted and diagram.view.hidden
    assert Budget().fits(diagram.view.size), diagram.view.size
    accounted(diagram)
    assert "max_nodes=None" in repr(diagram) and "collapse=False" in repr(diagram)
    assert "folded to fit about 3 screens" in diagram.source


def test_what_folds_first_chains_then_modules_then_a_band():
    assert {g.kind for g in draw(chain(300)[0]).view.groups} == {"chain"}
    loss, model = mlp(70)      # 10 layers: their boxes fit
    view = draw(loss, names=model).view
    assert {g.kind for g in view.groups} == {"scope"}
    assert all(g.title.endswith("(Linear)") for g in view.groups)     # a one-op ReLU is not boxed
    assert view.notes[0].startswith(f"{len(view.groups)} modules folded into boxes (Linear ×")
    loss, model = mlp(300)     # 42 layers: boxed, and still too tall, so the middle layers go in a band
    assert {g.kind for g in draw(loss, names=model).view.groups} == {"scope", "band"}
    assert {g.kind for g in draw(fan(300)[0]).view.groups} == {"band"}


def test_the_estimate_errs_large_against_the_real_layout():
    for build in (chain, mlp, fan, comb):
        loss, model = build(300)
        diagram = draw(loss, names=model)
        w, h = map(float, re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"', diagram.svg()).groups())
        budget = Budget()
        assert w <= budget.width and h <= budget.height, (build.__name__, w, h)


@pytest.mark.parametrize("build", [chain, mlp, fan, comb])
def test_a_small_graph_never_folds(build):
    loss, model = build(30)
    diagram = draw(loss, names=model)
    assert len(diagram.trace.nodes) <= SMALL
    assert not diagram.view.groups and not diagram.view.fitted
    assert "hidden" not in repr(diagram)


def test_unfolding_and_explicit_limits_keep_their_meaning():
    loss, _ = chain(300)
    assert not draw(loss, max_nodes=None).view.groups
    assert not draw(loss, collapse=False).view.groups
    view = draw(loss, max_nodes=50).view
    assert len(view.nodes) + len(view.groups) <= 50 and not view.fitted
    with pytest.raises(ValueError, match="max_nodes must be"):
        draw(loss, max_nodes="all")


def test_animate_folds_the_same_way_and_steps_box_by_box():
    loss, model = mlp(300)
    anim = torch.animate(loss, names=model, forward=False)
    view = draw(loss, names=model, show_grads=False, rankdir="BT").view
    boxes = {g.id for g in view.groups}
    assert boxes and all(f'id="{b}"' in anim.svg for b in boxes)
    assert len(anim.frames) < len(anim.steps)
    folded = [f for f in anim.frames if f.node in boxes]
    assert folded and all("gv-folded" in f.text for f in folded)
    # every engine step is in exactly one frame: the frames' step ranges cover them all
    covered = 0
    for f in anim.frames:
        m = re.search(r"backward (\d+)–(\d+)/", f.title)
        covered += int(m.group(2)) - int(m.group(1)) + 1 if m else 1
    assert covered == len(anim.steps)


# -- a box's label ---------------------------------------------------------------------------------------
GPT_BLOCK = [f"transformer.h.0.{n}" for n in (
    "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
    "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias")]


def test_parameter_names_are_relative_to_the_box_when_unambiguous():
    assert relative_names(GPT_BLOCK, "0 (Block)")[-2] == "mlp.c_proj.weight"
    assert relative_names(["fc.weight", "fc.bias"], "fc (Linear)") == ["weight", "bias"]
    assert relative_names(["a.0.w", "b.0.w"], "0 (Block)") == ["a.0.w", "b.0.w"]    # "w" twice: kept whole
    assert relative_names(["w", "x"], "encoder") == ["w", "x"]


def test_a_box_label_wraps_at_50_characters_on_at_most_3_lines():
    lines = wrap_items(relative_names(GPT_BLOCK, "0 (Block)"), "params: ", 3)
    assert len(lines) == 3 and all(len(line) <= 50 for line in lines)
    assert lines[0].startswith("params: ln_1.weight, ln_1.bias,")
    shown = sum(1 for line in lines for item in line.removeprefix("params: ").split(",")
                if item.strip() and not item.strip().startswith("+"))
    assert lines[-1].endswith(f"+ {12 - shown} more")
    assert wrap_items(["w", "x"], "params: ", 3) == ["params: w, x"]


def _on_a_path_through(view, group: str) -> list:
    """The drawn nodes that gradients reach from the box and that reach it again."""
    succs, preds = {}, {}
    for s, d in ((e.src, e.dst) for e in view.edges):
        if s != d:
            succs.setdefault(s, set()).add(d)
            preds.setdefault(d, set()).add(s)

    def reach(links):
        seen, stack = set(), list(links.get(group, ()))
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(links.get(v, ()))
        return seen
    return sorted((reach(succs) & reach(preds)) - {group})


def test_a_band_takes_along_the_nodes_between_its_members():
    # a shortcut from deep in a chain to its end and back in (a packed GRU's gates, a skip):
    # the shortcut node sits near the output, yet a path runs from the band through it into the band
    x = torch.randn(3, requires_grad=True)
    h = x
    for i in range(40):
        h = h * 1.01
        if i == 5:
            skip = h.exp()
        if i == 30:
            h = h + skip
    view = draw((h * skip).sum(), max_nodes=20).view
    bands = [g.id for g in view.groups if g.kind == "band"]
    assert bands and all(_on_a_path_through(view, g) == [] for g in bands)


@pytest.mark.parametrize("build", [chain, mlp, fan, comb])
def test_measuring_only_the_boxes_folding_needs_folds_as_measuring_every_one(build):
    from gradviz.render.collapse import plan
    from gradviz.render.dot import DrawOptions, label_context
    from gradviz.render.size import Sizes, node_size
    from gradviz.render.theme import resolve_theme
    loss, model = build(2000)
    trace = draw(loss, names=model).trace
    ctx = label_context(trace, DrawOptions(), resolve_theme(None))
    lazy = Sizes(trace, ctx)
    every = {n.id: node_size(n, ctx) for n in trace.nodes}
    a = plan(trace, sizes=lazy, labelled=True)
    b = plan(trace, sizes=every, labelled=True)
    assert (a.nodes, a.owner, a.size, a.notes) == (b.nodes, b.owner, b.size, b.notes)
    assert [(g.id, g.title, g.members) for g in a.groups] == [(g.id, g.title, g.members) for g in b.groups]
    if build in (chain, mlp):   # (a fan's or a comb's band is cut by the median width of all its nodes)
        assert len(lazy.known) < len(trace.nodes) / 2     # most boxes folded away were never measured


def test_the_footnote_is_wrapped_at_words_to_fit_a_narrow_stage():
    """The note of what was folded reads whole in a 1024-px player's stage: no footnote line is longer
    than NOTE_WIDTH characters, and the wrapped text says word for word what the notes say."""
    diagram = draw(*chain(300)[:1])
    notes = diagram.view.notes
    assert any(len(line) > NOTE_WIDTH for line in notes)          # "folded to fit ...: max_nodes=None ..."
    label = re.search(r'\blabel="((?:[^"\\]|\\.)*)"[^\n]*labeljust', diagram.source).group(1)
    lines = [line for line in label.split("\\l") if line]
    assert lines and max(len(line) for line in lines) <= NOTE_WIDTH, lines
    assert " ".join(" ".join(lines).split()) == " ".join(" ".join(notes).split())
