"""A folded box opened in place: the steps inside are the unfolded player's, counted one way, and found by name."""
import importlib.util
import pathlib
import re

import pytest

import gradviz
from gradviz.player import animate
from gradviz.player.frames import state_at
from gradviz.player.inside import PAGE_STEPS, RUN_STEPS, expand, sub_trace
from gradviz.render import Diagram, backends, options, plan
from gradviz.render.collapse import count_nodes

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt.py"


def gpt(layers: int):
    """examples/gpt.py's GPT of `layers` blocks, its loss and its parameters."""
    spec = importlib.util.spec_from_file_location("gpt_example_open_box", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    chars, encode, _ = mod.encoder(mod.TEXT)
    gradviz.manual_seed(0)
    model = mod.GPT(mod.GPTConfig(vocab_size=len(chars), block_size=8, n_layer=layers, n_head=2, n_embd=16))
    _, loss = model(gradviz.tensor([encode(mod.TEXT[:8])]), gradviz.tensor([encode(mod.TEXT[1:9])]))
    return loss, dict(model.named_parameters())


def layered():
    """Three scoped layers: folded with collapse="scopes", each layer is one box."""
    gradviz.manual_seed(0)
    x = gradviz.randn(2, 3)
    for i in range(3):
        w = gradviz.randn(3, 3, requires_grad=True)
        b = gradviz.randn(3, requires_grad=True)
        w.name, b.name = f"w{i}", f"b{i}"
        with gradviz.scope(f"layer{i}"):
            x = (x @ w + b).tanh()
    return x.sum()


@pytest.fixture(scope="module")
def players():
    unfolded = animate(layered(), max_nodes=None, collapse=False)
    return unfolded, animate(unfolded.trace, collapse="scopes")


def opened(folded, frame) -> list:
    start, stop = frame.inner
    return folded.inside.frames[start:stop]


def test_a_box_opened_steps_as_the_unfolded_player_does(players):
    unfolded, folded = players
    boxes = [f for f in folded.frames if f.inner]
    assert {f.phase for f in boxes} == {"forward", "backward"} and set(folded.inside.boxes) == {f.node for f in boxes}
    seen = []                       # every step as the learner meets it, opening every box on the way
    for frame in folded.frames:
        if not frame.inner:
            seen.append((frame.phase, frame.step, frame.node if frame.node in unfolded.stage.kinds else None))
            continue
        first, last = frame.source
        inside = opened(folded, frame)
        assert len(inside) == last - first + 1
        drawn = set(drawn_ids(folded, frame.node))
        for k, (mine, theirs) in enumerate(zip(inside, unfolded.frames[first:last + 1])):
            # the same step, node, panel (values and names), caption, counter and edge labels
            assert (mine.phase, mine.step, mine.node, mine.span) == (theirs.phase, theirs.step, theirs.node, theirs.span)
            assert (mine.title, mine.text, mine.caption) == (theirs.title, theirs.text, theirs.caption)
            assert mine.labels == {i: t for i, t in theirs.labels.items() if i in drawn}
            # the diagram inside shows the unfolded player's state at that step, on the ids it draws
            state = state_at(inside, k)
            assert state == {i: s for i, s in state_at(unfolded.frames, first + k).items() if i in drawn}
        seen += [(f.phase, f.step, f.node) for f in inside]
    assert [s[:2] for s in seen] == [(f.phase, f.step) for f in unfolded.frames]
    # a step outside every box is the unfolded player's own node
    assert all(node in (None, f.node) for (_, _, node), f in zip(seen, unfolded.frames))


def drawn_ids(folded, box: str) -> list:
    """The node and edge ids the box's own layout draws."""
    return re.findall(r'<g id="([^"]+)" class="(?:node|edge)', folded.inside.boxes[box]["svg"])


def test_the_page_holds_the_boxes_and_the_frames_inside(players):
    _, folded = players
    data = folded.data()
    assert set(data["boxes"]) == set(folded.inside.boxes) and len(data["inner"]) == len(folded.inside.frames)
    titles = {v["title"] for v in data["boxes"].values()}
    assert titles == {"layer0", "layer1", "layer2"}
    for frame, packed in zip(folded.frames, data["frames"]):
        assert packed.get("i") == (list(frame.inner) if frame.inner else None)
    # every box's layout draws its members, and the nodes right outside it
    trace = folded.trace
    view = plan(trace, collapse="scopes")
    for group in view.groups:
        members = {m for m in group.members if any(n.id == m for n in trace.nodes)}
        sub = sub_trace(trace, members)
        assert members <= {n.id for n in sub.nodes}
        assert all(e.src in {n.id for n in sub.nodes} and e.dst in {n.id for n in sub.nodes} for e in sub.edges)


def test_counts_agree_between_box_note_panel_and_counter(players):
    unfolded, folded = players
    trace = folded.trace
    view = plan(trace, collapse="scopes")
    index = {n.id: n for n in trace.nodes}
    svg = folded.svg
    steps_in = {}
    for s in trace.steps:
        steps_in[view.owner.get(s.node)] = steps_in.get(view.owner.get(s.node), 0) + 1
    for group in view.groups:
        n = group.steps(index)
        assert n == steps_in[group.id]                        # the box counts the steps backward runs in it
        assert count_nodes(n) in group.label_lines(index)     # its label
        assert f"drawn as one box ({count_nodes(n)})" in " ".join(view.notes)   # the diagram's note
        assert count_nodes(n) in svg
        runs = [f for f in folded.frames if f.phase == "backward" and f.node == group.id]
        # the frames of the box span its steps; the panel's title and the counter ("k") say the same
        assert sum(f.span[1] - f.span[0] + 1 for f in runs) == n
        for f in runs:
            first, last = f.span
            head = f"backward {first}–{last}/{len(trace.steps)}" if last > first else f"backward {first}/"
            assert f.title.startswith(head) and f.to_json()["k"] == [first, last]
            assert (f"{last - first + 1} engine steps" if last > first else "1 engine step") in f.text
    forward = sum(f.phase == "forward" for f in unfolded.frames)
    assert folded.data()["steps"] == [forward, len(trace.steps)]


def test_plurals():
    assert (count_nodes(1), count_nodes(2), count_nodes(1234)) == ("1 node", "2 nodes", "1,234 nodes")


@pytest.fixture(scope="module")
def gpt12():
    loss, params = gpt(12)
    return animate(loss, names=params, collapse=[f"{i} (Block)" for i in range(12)]), loss, params


def test_find_knows_a_parameter_of_a_folded_12_layer_gpt_and_its_box(gpt12):
    anim, loss, params = gpt12
    names = {text: (node, box) for text, node, box in expand(anim.inside.names)}
    found = [text for text in names if "h.7.attn.c_attn.weight" in text]
    assert found == ["transformer.h.7.attn.c_attn.weight"]
    node, box = names[found[0]]
    assert anim.inside.boxes[box]["title"] == "7 (Block)"
    assert f'id="{node}"' in anim.inside.boxes[box]["svg"]          # drawn in the box's own layout
    assert f'id="{node}"' not in anim.svg                            # folded away in the graph's
    assert any(f.node == box and f.inner for f in anim.frames)
    # the page holds what a learner steps through, not every step of every box
    assert len(anim.inside.frames) <= PAGE_STEPS
    assert all(stop - start <= RUN_STEPS for start, stop in (f.inner for f in anim.frames if f.inner))


def test_folded_by_default_a_parameter_is_still_found_in_the_box_that_holds_it():
    loss, params = gpt(12)
    anim = animate(loss, names=params)
    (node, box), = [(node, box) for text, node, box in expand(anim.inside.names)
                    if text == "transformer.h.7.attn.c_attn.weight"]
    assert box and f'id="{node}"' not in anim.svg and f'id="{box}"' in anim.svg
    # every box counts its nodes one way, the band of deep blocks too: the steps backward runs in it
    view = Diagram(anim.trace, options(**anim.draw_options)).view     # as the animation drew it
    assert any(g.kind == "band" for g in view.groups)
    index = {n.id: n for n in anim.trace.nodes}
    for group in view.groups:
        n = group.steps(index)
        assert sum(s.node in group.members for s in anim.trace.steps) == n
        assert count_nodes(n) in " ".join(group.label_lines(index))
    if box in anim.inside.boxes:
        assert f'id="{node}"' in anim.inside.boxes[box]["svg"]


def test_the_stepper_opens_the_same_boxes_as_the_saved_player():
    stepper = gradviz.step(layered(), collapse="scopes")
    assert stepper.inner == [] and stepper.boxes == {}            # nothing has run in a box yet
    stepper.next()
    stepper.run_to_end()
    anim = animate(layered(), collapse="scopes", forward=False)
    assert set(stepper.boxes) == set(anim.inside.boxes)
    assert [b["title"] for b in stepper.boxes.values()] == [b["title"] for b in anim.inside.boxes.values()]
    keys = ("t", "h", "s", "n", "k", "l")
    assert [[f.get(k) for k in keys] for f in stepper.inner] == \
        [[f.to_json().get(k) for k in keys] for f in anim.inside.frames]
    assert [f.get("i") for f in stepper.frames[1:]] == [f.to_json().get("i") for f in anim.frames]
    assert stepper.counts == [0, len(anim.steps)]
    stepper.reset()
    assert stepper.inner == [] and stepper.boxes == {}


def chain(n: int):
    x = gradviz.randn(4, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.001
    return y.sum()


def test_the_find_index_of_a_folded_page_grows_with_what_it_shows_not_with_what_its_boxes_hide():
    import json
    from gradviz.player.inside import _names
    sizes = {}
    for n in (1_000, 4_000):
        anim = animate(chain(n))
        sizes[n] = len(json.dumps(anim.inside.names))
        # written out, the index finds every name a node holds (its type, its tensors) in the box that holds it
        view = Diagram(anim.trace, options(**anim.draw_options)).view
        titles = {g.id: g.title for g in view.groups}
        every = _names(anim.trace, view.owner, titles, {box: None for box in titles})   # every box open
        found = {(word, box) for text, _, box in expand(anim.inside.names) for word in text.split(" ")}
        assert found == {(word, box) for text, _, box in every for word in text.split(" ")}
        in_box = [text for text, _, box in expand(anim.inside.names) if box]
        assert len(in_box) == len(set(in_box)) and "MulBackward0" in in_box     # each name once a box
    assert sizes[4_000] < sizes[1_000] * 1.2, sizes      # the chain's box hides 4x the nodes: same index


def test_a_folded_page_holds_predict_answers_for_the_steps_it_shows_one_by_one():
    from gradviz.player.predict import payload
    anim = animate(chain(2_000))
    data = anim.data()
    single = {f.span[0] for f in anim.frames + anim.inside.frames
              if f.phase == "backward" and f.span and f.span[0] == f.span[1]}
    assert set(data["predict"]) == {str(k) for k in single} & set(payload(anim.trace))
    assert len(data["predict"]) < 10 < len(payload(anim.trace))       # not the 2,000 steps the box runs
    unfolded = animate(chain(30), max_nodes=None)
    assert unfolded.data()["predict"] == payload(unfolded.trace)      # a step at a time: every answer


def test_a_folded_band_names_a_dozen_grads_it_wrote_and_counts_the_others():
    from gradviz.player.folded import WROTE_SHOWN
    loss, params = gpt(12)
    anim = animate(loss, names=params)
    view = Diagram(anim.trace, options(**anim.draw_options)).view
    band = next(g for g in view.groups if g.kind == "band")
    members = set(band.members)
    written = [a for s in anim.trace.steps if s.node in members for a in s.accumulations]
    assert len(written) > WROTE_SHOWN
    frame = next(f for f in anim.frames if f.node == band.id and f.phase == "backward")
    text = frame.to_json()["h"]
    assert text.count(".grad (") == WROTE_SHOWN and f"and {len(written) - WROTE_SHOWN:,} more" in text


def test_the_boxes_are_laid_out_when_the_page_reads_them(monkeypatch):
    """animate() settles which frames open where; Graphviz lays each box out only when the page (or
    `inside.boxes`, `inside.frames`) is first read, and once."""
    unfolded = animate(layered(), max_nodes=None, collapse=False)
    layouts = []
    real = backends.render_svg
    monkeypatch.setattr(backends, "render_svg", lambda source, *a, **k: layouts.append(source) or real(source, *a, **k))
    folded = animate(unfolded.trace, collapse="scopes")
    assert len(layouts) == 1   # the page's own layout
    runs = [f for f in folded.frames if f.inner]   # each run's frames inside follow the runs before it
    assert runs and [f.inner[0] for f in runs] == [0, *(f.inner[1] for f in runs[:-1])]
    assert all(f.inner[1] - f.inner[0] == f.source[1] - f.source[0] + 1 for f in runs)
    data = folded.data()
    assert len(layouts) == 1 + 3 and set(data["boxes"]) == set(folded.inside.boxes) == {f.node for f in runs}
    assert runs[-1].inner[1] == len(folded.inside.frames) == len(data["inner"])
    folded.html()
    assert len(layouts) == 4
