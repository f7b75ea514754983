"""Edges as thick as the gradient they carry, and arrows that point the way gradient flows.

The width level of every edge in every frame of the saved player (its JSON, folded as the script
folds it) is checked against the gradients the engine computed: the largest |entry| of the last
gradient the edge carried, one level per factor of 10. The reversed arrowheads the stage adds are
checked against the layout's own geometry, and in Chromium, against what is painted."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

import gradviz as torch
import gradviz.nn as nn
import gradviz.nn.functional as F
from gradviz import animate
from gradviz.player.pack import unpack
from gradviz.player.stage import _points, backward_arrows

from tests.support.browser_support import chromium


def expected_level(values) -> int:
    """What the width should say for a gradient (written here from the rule, not from the code)."""
    biggest = float(np.max(np.abs(np.asarray(values, dtype=np.float64)))) if np.size(values) else 0.0
    if biggest == 0:
        return 0
    if not math.isfinite(biggest):
        return 6
    return min(6, max(1, math.floor(math.log10(biggest)) + 5))


def barlow():
    torch.manual_seed(0)
    z1 = torch.randn(4, 3, requires_grad=True)
    z2 = torch.randn(4, 3, requires_grad=True)
    z1n = (z1 - z1.mean(0)) / z1.std(0)
    c = z1n.T @ z2 / 4
    return -torch.diagonal(c).sum()


def mlp():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 3))
    return F.cross_entropy(model(torch.randn(4, 3)), torch.tensor([0, 2, 1, 0]))


def scales():
    """Gradients from 0 to 1000s: a dead ReLU, a tiny and a huge factor, a fan-out b = a + a."""
    a = torch.tensor([0.5, -2.0, 3.0], requires_grad=True)
    b = a + a
    dead = F.relu(-b.abs() - 1)                     # all zero gradient past it
    return (b * 1e-4).sum() + (b * 2000.0).sum() + dead.sum() + (a * a).sum()


PROGRAMS = {"barlow": barlow, "mlp": mlp, "scales": scales}


def player_frames(anim) -> list:
    """The frames as the saved page carries them (packed JSON), unpacked as the script does."""
    html = anim.html()
    data = json.loads(re.search(r'<script type="application/json" class="gv-data">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))
    return unpack(data["frames"])


def carried(trace) -> list:
    """Per backward step: {edge id: the gradient values it carried in that step}, from the Trace."""
    index = {e.id: e for e in trace.edges}
    kinds = {n.id: n.kind for n in trace.nodes}
    out = []
    for step in trace.steps:
        got = {}
        for e in trace.edges:     # the seed, along the edge from the root output to its grad_fn
            if e.src == step.node and e.dst in trace.roots and kinds[e.dst] == "output" and step.grad_in:
                got.setdefault(e.id, step.grad_in[0].values)
        for edge_id, grad, _ in step.flows:
            got[edge_id] = grad.values
        for acc in step.accumulations:
            for e in trace.edges:
                if e.dst == step.node and e.src == acc.node:
                    got[e.id] = acc.contribution.values
        assert all(v is not None for v in got.values())
        assert all(i in index for i in got)
        out.append(got)
    return out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_edge_width_in_every_frame_is_the_gradient_it_carried(name):
    anim = animate(PROGRAMS[name]())
    frames = player_frames(anim)
    backward = [k for k, f in enumerate(anim.frames) if f.phase == "backward"]
    assert len(backward) == len(anim.trace.steps) and backward == list(range(backward[0], len(frames)))
    flows = carried(anim.trace)
    shown: dict = {}
    expected: dict = {}
    levels_seen = set()
    for k, frame in enumerate(frames):
        shown.update(frame.get("w", {}))
        if k >= backward[0]:
            for edge_id, values in flows[k - backward[0]].items():
                expected[edge_id] = expected_level(values)
        assert shown == expected, (name, k)
        levels_seen |= set(shown.values())
    if name == "scales":
        assert {0, 6} <= levels_seen and len(levels_seen) >= 4       # the scale is used end to end
    assert set(expected) >= {e.id for e in anim.trace.edges if e.slot >= 0
                             and anim.trace.node(e.dst).kind != "output"}   # every gradient edge is drawn


def test_going_back_to_forward_clears_the_widths_and_a_frame_only_carries_changes():
    anim = animate(barlow())
    frames = player_frames(anim)
    assert all("w" not in f for f, mine in zip(frames, anim.frames) if mine.phase == "forward")
    seen: dict = {}
    for f in frames:
        for edge_id, level in f.get("w", {}).items():
            assert seen.get(edge_id) != level          # only what changed travels
            seen[edge_id] = level


def edge_groups(svg: str) -> dict:
    return {m.group(1): m.group(0) for m in re.finditer(r'<g\b[^>]*\bid="(e\d+)"[^>]*class="edge[^"]*"[^>]*>.*?</g>',
                                                         svg, re.S)}


def test_each_arrow_also_has_its_backward_head_at_the_input_end():
    anim = animate(barlow())
    groups = edge_groups(anim.svg)
    assert groups and len(groups) == len(anim.trace.edges)
    for edge_id, group in groups.items():
        path = _points(re.search(r'<path\b[^>]*?\bd="([^"]*)"', group).group(1))
        head = _points(re.search(r'<polygon\b(?![^>]*gv-back)[^>]*?\bpoints="([^"]*)"', group).group(1))
        back = _points(re.search(r'<polygon class="gv-back"[^>]*points="([^"]*)"', group).group(1))
        tip = _points(re.search(r'<path class="gv-tip"[^>]*d="([^"]*)"', group).group(1))
        start, end = np.array(path[0]), np.array(path[-1])
        far = max(head, key=lambda p: np.hypot(*(np.array(p) - end)))
        assert np.allclose(back[1], start, atol=0.06)            # the backward head's point is at the input
        assert np.allclose(tip, [end, far], atol=0.06)           # the line reaches the consumer again
        # the same size as the forward head, pointing away from the line (at the input node)
        length = np.hypot(*(np.array(far) - end))
        base = (np.array(back[0]) + np.array(back[2])) / 2
        assert abs(np.hypot(*(base - start)) - length) < 0.15
        along = np.array(path[1]) - start
        assert np.dot(base - start, along) > 0


def test_a_saved_tensors_edge_has_no_arrow_to_turn():
    svg = ('<svg><g id="e0" class="edge saved"><title>n0->n1</title>'
           '<path fill="none" stroke="black" d="M0,0C1,1 2,2 3,3"/></g></svg>')
    assert backward_arrows(svg) == svg


@pytest.mark.browser
def test_chromium_paints_widths_and_turns_the_arrows_in_backward(tmp_path):
    anim = animate(barlow())
    path = anim.save(tmp_path / "barlow.html")
    first_back = next(k for k, f in enumerate(anim.frames) if f.phase == "backward")
    with chromium((1280, 720)) as browser:
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.locator(".gv-player").wait_for()
        probe = """() => [...document.querySelectorAll('.gv-canvas g.edge:not(.gv-hidden)')].map(g => {
            const vis = el => el ? getComputedStyle(el).visibility : null;
            return [g.id, [...g.classList].filter(c => /^gv-w\\d$/.test(c)).join(''),
                    parseFloat(getComputedStyle(g.querySelector('path')).strokeWidth),
                    vis(g.querySelector('polygon:not(.gv-back)')), vis(g.querySelector('polygon.gv-back')),
                    vis(g.querySelector('path.gv-tip'))];
        })"""
        page.keyboard.press("ArrowRight")
        forward = page.evaluate(probe)         # the first op's edges, just drawn
        assert forward and all(w == "" and head == "visible" and back == "hidden" and tip == "hidden"
                               for _, w, _, head, back, tip in forward if head is not None)
        for _ in range(len(anim.frames) - 2):
            page.keyboard.press("ArrowRight")
        assert page.locator(".gv-player").get_attribute("data-frame") == str(len(anim.frames) - 1)
        final = page.evaluate(probe)
        widths = {}
        for f in anim.frames:
            widths.update(f.widths)
        css = {0: 1, 1: 1.5, 2: 2.25, 3: 3, 4: 4, 5: 5.5, 6: 7}
        for edge_id, cls, stroke, head, back, tip in final:
            if head is None:
                continue
            assert head == "hidden" and back == "visible" and tip == "visible", edge_id
            level = widths.get(edge_id)
            assert cls == (f"gv-w{level}" if level is not None else ""), edge_id
            if level is not None:
                assert stroke == css[level], (edge_id, level, stroke)
        # back to the first backward step and to forward: the widths go as the frames say
        page.keyboard.press("Home")
        for _ in range(first_back):
            page.keyboard.press("ArrowRight")
        early = {i: c for i, c, *_ in page.evaluate(probe) if c}
        assert early == {i: f"gv-w{w}" for i, w in anim.frames[first_back].widths.items()}
        page.keyboard.press("ArrowLeft")
        assert not any(c for _, c, *_ in page.evaluate(probe))
        assert not errors, errors


@pytest.mark.parametrize("name", ["barlow", "mlp"])
def test_gradient_labels_sit_clear_of_every_node(name):
    """The value written beside a flowing edge never covers a node: the player's anchor for each edge
    (the saved page's `mid`) leaves room for the longest text that edge carries."""
    from gradviz.player.stage import CHAR_WIDTH, LABEL_GAP
    anim = animate(PROGRAMS[name]())
    html = anim.html()
    data = json.loads(re.search(r'<script type="application/json" class="gv-data">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))
    nodes = re.findall(r'<g\b[^>]*class="node[^"]*"[^>]*>.*?</g>', anim.svg, re.S)
    boxes = []
    for group in nodes:
        pts = [p for m in re.finditer(r'\b(?:points|d)="([^"]*)"', group) for p in _points(m.group(1))]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        boxes.append((min(xs), min(ys), max(xs), max(ys)))
    assert len(boxes) == len(anim.trace.nodes)
    for m in re.finditer(r'<g\b[^>]*class="cluster[^"]*"[^>]*>.*?<text\b[^>]*x="([-\d.]+)" y="([-\d.]+)"[^>]*>'
                         r'([^<]*)</text>', anim.svg, re.S):     # a module's name on its cluster, too
        x, y, w = float(m.group(1)), float(m.group(2)), 6.0 * len(m.group(3))
        boxes.append((x - w / 2, y - 8, x + w / 2, y + 2))
    assert len(boxes) > len(anim.trace.nodes) or name != "mlp"
    checked = 0
    for frame in unpack(data["frames"]):
        for edge_id, text in frame["l"].items():
            x, y, left = data["mid"][edge_id]
            w = CHAR_WIDTH * len(text)
            x0, x1 = (x - LABEL_GAP - w, x - LABEL_GAP) if left else (x + LABEL_GAP, x + LABEL_GAP + w)
            for b in boxes:
                assert not (x0 < b[2] and x1 > b[0] and y - 11 < b[3] and y + 3 > b[1]), (edge_id, text, b)
            checked += 1
    assert checked >= len(anim.trace.steps)


def test_a_label_keeps_off_a_clusters_name_and_other_edges_texts():
    from gradviz.player.stage import CHAR_WIDTH, LABEL_GAP, Stage
    svg = ('<svg viewBox="0 0 400 400"><g id="graph0" class="graph">'
           '<g id="scope0" class="cluster"><title>cluster_0</title><path d="M100,-390L390,-390L390,-10L100,-10Z"/>'
           '<text text-anchor="middle" x="150" y="-198" font-size="10.00">1 (ReLU)</text></g>'
           '<g id="n0" class="node op"><title>n0</title><polygon points="150,-100 250,-100 250,-60 150,-60"/></g>'
           '<g id="n1" class="node op"><title>n1</title><polygon points="150,-340 250,-340 250,-300 150,-300"/></g>'
           '<g id="e0" class="edge"><title>n0->n1</title><path d="M200,-100C200,-160 200,-240 200,-293"/>'
           '<polygon points="197,-293 200,-300 203,-293 197,-293"/></g>'
           '<g id="e1" class="edge"><title>n0->n1</title><path d="M240,-100C300,-160 300,-240 240,-300"/>'
           '<polygon points="237,-293 240,-300 243,-293 237,-293"/>'
           '<text text-anchor="middle" x="320" y="-200" font-size="9.00">(4, 5)</text></g></g></svg>')
    stage = Stage(svg)
    x, y, left = stage.place({"e0": 20})["e0"]
    w = CHAR_WIDTH * 20
    x0, x1 = (x - LABEL_GAP - w, x - LABEL_GAP) if left else (x + LABEL_GAP, x + LABEL_GAP + w)
    for b in stage.text_boxes + [(None, n) for n in stage.node_boxes]:
        b = b[1]
        assert not (x0 < b[2] and x1 > b[0] and y - 11 < b[3] and y + 3 > b[1]), (x, y, left, b)


def test_the_stepper_sends_the_same_widths_as_it_runs_and_again_after_reset():
    pytest.importorskip("anywidget")
    loss = barlow()
    s = torch.step(loss)
    while not s.finished:
        s.next()
    flows = carried(s.trace)

    def check():
        shown, expected = {}, {}
        sent = s.frames[1:]                 # frame 0: the moment before backward
        assert len(sent) == len(flows)
        for frame, got in zip(sent, flows):
            shown.update(frame.get("w", {}))
            expected.update({edge_id: expected_level(v) for edge_id, v in got.items()})
            assert shown == expected
    check()
    s.reset()
    assert not any("w" in f for f in s.frames)
    while not s.finished:
        s.next()
    check()


def test_the_gif_points_backward_edges_at_their_input_and_draws_their_width():
    from gradviz.player.gif import PENWIDTHS, backward_pos, restyle
    back = backward_pos("e,27,36 27,72 27,64 27,54 27,46")
    assert back == "s,27,72 27,62 27,64 27,54 27,36"     # head at the input; the line runs on to the old tip
    assert backward_pos("27,72 27,64 27,54 27,46") is None  # no arrowhead to turn
    positioned = 'digraph {\n\tn0 -> n1\t[id=e0, pos="e,27,36 27,72 27,64 27,54 27,46"];\n}\n'
    out = restyle(positioned, {"e0": "done"}, {}, {"e0": "edge"}, widths={"e0": 5})
    assert f'dir="back"' in out and f'pos="{back}"' in out and f'penwidth="{PENWIDTHS[5]}"' in out
    forward = restyle(positioned, {"e0": "new"}, {}, {"e0": "edge"}, widths={})
    assert "dir=" not in forward and "penwidth=\"3" not in forward
