"""Diagrams of the backward graph: node and edge counts, names, colours and labels in the DOT
source, for the tutorials' examples, fan-out, views, broadcasting, scopes, folding and
derivative order; the SVG contract the player relies on (trace ids on every <g>)."""
from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET

import graphviz
import numpy as np
import pytest

import gradviz as torch
from gradviz import examples
from gradviz.render import Diagram, draw, layout_svg, make_dot, plan, to_dot
from gradviz.tracing import Recorder, build_trace, record_backward

# -- reading DOT and SVG back ------------------------------------------------------------------
SVG_NS = "{http://www.w3.org/2000/svg}"
_NODE = re.compile(r"^\s*([\w-]+) \[(.*)\]$")
_EDGE = re.compile(r"^\s*([\w-]+) -> ([\w-]+)(?: \[(.*)\])?$")


def dot_nodes(source: str) -> dict:
    """node name -> its attribute text, for every node statement in a DOT source."""
    found = {}
    for line in source.splitlines():
        m = _NODE.match(line)
        if m and "->" not in line and m.group(1) not in ("graph", "node", "edge"):
            found[m.group(1)] = m.group(2)
    return found


def dot_edges(source: str) -> list:
    """(src, dst, attribute text) for every edge statement in a DOT source."""
    return [(m.group(1), m.group(2), m.group(3) or "") for m in map(_EDGE.match, source.splitlines()) if m]


def attr(text: str, name: str) -> str | None:
    m = re.search(rf"(?:^|\s){name}=(\"(?:[^\"\\]|\\.)*\"|<.*>(?=\s[\w]+=|$)|\S+)", text)
    if not m:
        return None
    value = m.group(1)
    return value[1:-1] if value.startswith('"') else value


def decode(label: str | None) -> str:
    """The text a (record or plain) DOT label draws: escapes undone, each line and each record
    field on a line of its own."""
    out, i, label = [], 0, label or ""
    while i < len(label):
        ch = label[i]
        if ch == "\\" and i + 1 < len(label):
            nxt = label[i + 1]
            out.append("\n" if nxt in "nlr" else nxt)
            i += 2
            continue
        if ch in "{}":
            pass
        elif ch == "|":
            out.append("\n")
        else:
            out.append(ch)
        i += 1
    return "\n".join(line for line in "".join(out).split("\n") if line)


def text(nodes: dict, node_id: str) -> str:
    return decode(attr(nodes[node_id], "label"))


def titled(nodes: dict, name: str) -> list:
    """ids of nodes whose label's first line is `name`."""
    return [node_id for node_id in nodes if text(nodes, node_id).split("\n")[0] == name]


def svg_groups(svg: str) -> dict:
    """SVG <g> id -> class (parsing the document as XML on the way)."""
    root = ET.fromstring(svg.encode("utf-8"))
    return {g.get("id"): g.get("class") for g in root.iter(f"{SVG_NS}g") if g.get("id")}


def svg_text(svg: str) -> str:
    root = ET.fromstring(svg.encode("utf-8"))
    return "\n".join("".join(t.itertext()) for t in root.iter(f"{SVG_NS}text"))


def svg_tags(svg: str) -> set:
    root = ET.fromstring(svg.encode("utf-8"))
    return {el.tag.replace(SVG_NS, "") for el in root.iter()}


def fill(nodes: dict, node_id: str) -> str:
    return attr(nodes[node_id], "fillcolor")


# -- the tutorials' examples -------------------------------------------------------------------
def test_pow_example_before_and_after_backward():
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = t.pow(3).sum()
    before = draw(out, names={"t": t, "out": out}).source
    nodes, edges = dot_nodes(before), dot_edges(before)
    assert len(nodes) == 5 and len(edges) == 4
    (leaf,) = titled(nodes, "t")
    (acc,) = titled(nodes, "AccumulateGrad")
    (pw,) = titled(nodes, "PowBackward0")
    (sm,) = titled(nodes, "SumBackward0")
    (root,) = titled(nodes, "out")
    assert fill(nodes, leaf) == "lightblue" and fill(nodes, root) == "darkolivegreen1"
    assert fill(nodes, acc) == fill(nodes, pw) == fill(nodes, sm) == "lightgray"
    assert [(s, d) for s, d, _ in edges] == [(leaf, acc), (acc, pw), (pw, sm), (sm, root)]
    assert text(nodes, leaf) == "t\n(3,) float32\ndata [1.0, 2.0, 3.0]\ngrad: not computed yet"
    assert text(nodes, pw) == "PowBackward0\nu₁ = t³\n(3,) float32\ndata [1.0, 8.0, 27.0]"   # t is taken
    assert text(nodes, acc) == "AccumulateGrad\nt.grad += ḡ"
    # micrograd's layout: the data and grad fields sit side by side under the header
    assert attr(nodes[leaf], "label").endswith("|{data [1.0, 2.0, 3.0]|grad: not computed yet}}")

    out.backward()
    after = dot_nodes(draw(out, names={"t": t, "out": out}).source)
    assert text(after, leaf) == "t\n(3,) float32\ndata [1.0, 2.0, 3.0]\ngrad\n[3.0, 12.0, 27.0]"  # d/dt Σ t³ = 3t²
    assert text(after, pw).split("\n")[:2] == ["PowBackward0", "u₁ = t³"]   # the same formula as before


def test_barlow_example_counts_names_and_broadcast_marks():
    torch.manual_seed(0)
    ex = examples.barlow()
    source = draw(*ex.tensors, names=ex.names).source
    nodes, edges = dot_nodes(source), dot_edges(source)
    names = sorted(text(nodes, node_id).split("\n")[0] for node_id in nodes)
    assert names == sorted(["z1", "z2", "loss", "AccumulateGrad", "AccumulateGrad", "MeanBackward1",
                            "SubBackward0", "StdBackward0", "DivBackward0", "DivBackward0", "PermuteBackward0",
                            "MmBackward0", "DiagonalBackward0", "SumBackward0", "NegBackward0"])
    assert len(edges) == 16
    (z1_acc,) = [n for n in titled(nodes, "AccumulateGrad") if "z1.grad" in text(nodes, n)]
    assert len([e for e in edges if e[0] == z1_acc]) == 3           # z1 feeds mean, sub and std
    assert "z1.grad = ḡ₁ + ḡ₂ + ḡ₃" in text(nodes, z1_acc)
    # z1 - z1.mean(0) and / z1.std(0) broadcast (3,) over (4, 3): their gradients are summed over axis 0
    summed = [(s, d) for s, d, a in edges if "Σ over axis 0" in a]
    (mean,), (std,) = titled(nodes, "MeanBackward1"), titled(nodes, "StdBackward0")
    (sub,) = titled(nodes, "SubBackward0")
    div = [d for s, d in summed if s == std]
    assert (mean, sub) in summed and len(div) == 1 and len(summed) == 2

    # after a recorded backward the marks come from the engine's own sum_to, and agree
    trace = record_backward(ex.tensors, names=ex.names)
    recorded = [(s, d) for s, d, a in dot_edges(draw(trace).source) if "Σ over axis 0" in a]
    assert recorded == summed


def test_doubling_loop_draws_one_mul_per_doubling():
    torch.manual_seed(0)
    ex = examples.doubling()
    (y,) = ex.tensors
    doublings = int(round(np.log2(float(y.data.norm() / ex.names["x"].data.norm()))))
    nodes = dot_nodes(draw(y, names=ex.names).source)
    assert len(titled(nodes, "MulBackward0")) == doublings
    assert len(nodes) == doublings + 3                       # + leaf x, its AccumulateGrad, output y


def test_mm_example_edges_carry_shapes():
    torch.manual_seed(0)
    ex = examples.mm()
    source = draw(*ex.tensors, names=ex.names).source
    nodes, edges = dot_nodes(source), dot_edges(source)
    (mm,) = titled(nodes, "MmBackward0")
    into_mm = sorted(attr(a, "label") for s, d, a in edges if d == mm)
    assert into_mm == ["(2, 3)", "(3, 2)"]
    assert text(nodes, mm).startswith("MmBackward0\nout = x M\n(2, 2) float32\ndata\n")


# -- fan-out, views, multiple outputs, broadcasting --------------------------------------------
def test_fan_out_draws_two_edges_and_their_gradients_sum():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a + a
    loss = (b * b).sum()
    trace = record_backward([loss], names={"a": a})
    source = draw(trace).source
    nodes, edges = dot_nodes(source), dot_edges(source)
    (acc,) = titled(nodes, "AccumulateGrad")
    (add,) = titled(nodes, "AddBackward0")
    fan = [(s, d, attr(x, "id")) for s, d, x in edges if s == acc]
    assert [(s, d) for s, d, _ in fan] == [(acc, add), (acc, add)]
    assert len({i for _, _, i in fan}) == 2
    assert "a.grad = ḡ₁ + ḡ₂" in text(nodes, acc)
    flows = {edge_id: p.values for step in trace.steps for edge_id, p, _ in step.flows}
    total = sum(flows[i] for _, _, i in fan)
    loss.backward()   # recording left a.grad alone; the real backward gives the reference
    np.testing.assert_allclose(total, a.grad.numpy())
    assert svg_groups(layout_svg(trace)).keys() >= {i for _, _, i in fan}


def test_views_and_multiple_outputs():
    x = torch.randn(4, requires_grad=True)
    v = x.view(2, 2).T[0]
    nodes = dot_nodes(draw(v).source)
    assert {n for n in ("ViewBackward0", "PermuteBackward0", "SelectBackward0") if titled(nodes, n)} == \
        {"ViewBackward0", "PermuteBackward0", "SelectBackward0"}

    p, q = x.split(2)
    diagram = draw(p, q * 2, names={"p": p})
    nodes, edges = dot_nodes(diagram.source), dot_edges(diagram.source)
    (split,) = titled(nodes, "SplitBackward0")
    out_labels = sorted(decode(attr(a, "label")) for s, d, a in edges if s == split)
    # each edge out of it names the output it carries, by the symbol the split's formula gives it
    second = next(n for n in diagram.trace.nodes if n.name == "SplitBackward0").out_names[1]
    assert second and out_labels == sorted(["p\n(2,)", f"{second}\n(2,)"])

    classic = make_dot((p, q))
    nodes = dot_nodes(classic.source)
    assert [fill(nodes, n) for n in nodes].count("darkolivegreen1") == 2
    assert len(titled(nodes, "SplitBackward0")) == 1


@pytest.mark.parametrize("shape, mark", [((3,), "Σ over axis 0"), ((1, 3), "Σ over axis 0"),
                                         ((2, 1), "Σ over axis 1"), ((), "Σ over axes 0, 1")])
def test_broadcast_edges_are_marked(shape, mark):
    a = torch.ones(*shape, requires_grad=True) if shape else torch.tensor(1.0, requires_grad=True)
    b = torch.ones(2, 3, requires_grad=True)
    loss = (a * b).sum()
    for drawn in (draw(loss, names={"a": a, "b": b}), draw(record_backward([loss], names={"a": a, "b": b}))):
        nodes, edges = dot_nodes(drawn.source), dot_edges(drawn.source)
        (a_acc,) = [n for n in titled(nodes, "AccumulateGrad") if "a.grad" in text(nodes, n)]
        (b_acc,) = [n for n in titled(nodes, "AccumulateGrad") if "b.grad" in text(nodes, n)]
        (a_edge,) = [x for s, d, x in edges if s == a_acc]
        (b_edge,) = [x for s, d, x in edges if s == b_acc]
        assert mark in decode(attr(a_edge, "label")) and attr(a_edge, "class") == "summed"
        assert attr(a_edge, "fontcolor") == "firebrick"
        assert "Σ" not in attr(b_edge, "label")


# -- scopes, collapse and max_nodes ------------------------------------------------------------
def _encoder_model():
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(3, 3, requires_grad=True)
    with torch.scope("encoder"):
        h = x @ w
        with torch.scope("block"):
            h = h.relu() * 2
    loss = h.sum()
    return loss, {"x": x, "w": w, "loss": loss}


def test_scopes_become_nested_clusters():
    loss, names = _encoder_model()
    diagram = draw(loss, names=names)
    source = diagram.source
    assert re.search(r"subgraph cluster_0 \{\n\s+.*label=encoder ", source)
    assert re.search(r"subgraph cluster_1 \{\n\s+.*label=block ", source)
    encoder = source[source.index("subgraph cluster_0"):]
    block = encoder[encoder.index("subgraph cluster_1"):]
    assert '"{MmBackward0\\n' in encoder.split("subgraph cluster_1")[0]
    assert '"{ReluBackward0\\n' in block and '"{MulBackward0\\n' in block
    assert '"{SumBackward0\\n' not in encoder and '"{SumBackward0\\n' in source
    groups = svg_groups(diagram.svg())
    assert sorted(c for c in groups.values() if c.startswith("cluster")) == ["cluster scope", "cluster scope"]


def test_collapse_scopes_draws_one_box_with_its_parameters():
    loss, names = _encoder_model()
    diagram = draw(loss, names=names, collapse="scopes")
    nodes, edges = dot_nodes(diagram.source), dot_edges(diagram.source)
    (box,) = [n for n in nodes if attr(nodes[n], "class") == "group scope"]
    label = text(nodes, box)
    assert label.startswith("encoder\n5 nodes\n")   # its 3 ops and 2 AccumulateGrads, as it lists them
    assert not titled(nodes, "MmBackward0") and not titled(nodes, "ReluBackward0")
    # x and w feed only ops inside the scope, so they (and their AccumulateGrads) go into the box
    assert "params: x, w" in label and not titled(nodes, "x") and not titled(nodes, "AccumulateGrad")
    assert sorted(n for n in nodes if n != box) == [titled(nodes, "SumBackward0")[0], titled(nodes, "loss")[0]]
    trace = diagram.trace
    hidden = sorted(n.name for n in trace.nodes if diagram.view.owner.get(n.id) == box)
    assert hidden == sorted(["MmBackward0", "ReluBackward0", "MulBackward0", "AccumulateGrad", "AccumulateGrad",
                             "w", "x"])
    # the edge leaving the box keeps its trace id, so the player can light it up
    ((src, dst, attrs),) = [e for e in edges if e[0] == box]
    (edge,) = [e for e in trace.edges if e.id == attr(attrs, "id")]
    assert trace.node(edge.src).name == "MulBackward0" and edge.dst == dst
    # the note counts what the box counts: its 5 ops and AccumulateGrads, the steps backward runs in it
    assert "5 nodes" in label and "g0: scope 'encoder' drawn as one box (5 nodes)" in svg_text(diagram.svg())


def test_max_nodes_folds_a_long_chain_with_a_note():
    x = torch.randn(3, requires_grad=True)
    y = x
    for _ in range(1000):
        y = y * 1.001
    diagram = draw(y.sum(), max_nodes=50)
    nodes = dot_nodes(diagram.source)
    assert len(nodes) <= 50
    (group,) = diagram.view.groups
    # the chain runs through 1,000 MulBackward0 and the SumBackward0; two stay at each end
    assert group.kind == "chain" and len(group.members) == 1001 - 4
    assert text(nodes, group.id) == "997 nodes in a chain\nMulBackward0 ×997"
    assert "MulBackward0 ×997" in diagram.source
    assert "a chain of 997 nodes folded" in diagram.source
    assert len(titled(nodes, "MulBackward0")) == 3 and titled(nodes, "SumBackward0")
    (into, out) = [(s, d) for s, d, _ in dot_edges(diagram.source) if group.id in (s, d)]
    assert into[1] == group.id and out[0] == group.id
    # below the limit nothing is folded
    assert not draw(y.sum(), max_nodes=None).view.groups


def test_max_nodes_folds_5000_ops_quickly():
    x = torch.randn(2, 4)
    w = torch.randn(4, 4, requires_grad=True)
    h = x
    for _ in range(1667):
        h = (h @ w + x).tanh()         # every step reuses w: 5,000 ops sharing one weight
    loss = h.sum()
    start = time.perf_counter()
    diagram = draw(loss)
    svg = diagram.svg()
    elapsed = time.perf_counter() - start
    assert len(diagram.trace.nodes) > 5000
    assert len(diagram.view.nodes) + len(diagram.view.groups) <= 400
    assert diagram.view.hidden > 4500
    (band,) = [g for g in diagram.view.groups if g.kind == "band"]
    assert "MmBackward0 ×" in diagram.source and "nodes between depth" in diagram.source
    ids = svg_groups(svg)
    assert band.id in ids and all(n in ids for n in diagram.view.nodes)
    assert elapsed < 30, f"drawing 5,000 ops took {elapsed:.1f} s"


def test_plan_maps_every_hidden_id_to_what_draws_it():
    loss, names = _encoder_model()
    trace = build_trace([loss], names)
    view = plan(trace, max_nodes=None, collapse="encoder")
    drawn = set(view.nodes) | {g.id for g in view.groups}
    assert all(view.owner.get(n.id, n.id) in drawn for n in trace.nodes)
    drawn_edges = {e.id for e in view.edges}
    assert all(e.id in drawn_edges or view.edge_owner[e.id] in drawn_edges | drawn for e in trace.edges)


# -- higher order, themes, layout --------------------------------------------------------------
def test_create_graph_nodes_are_filled_by_derivative_order():
    x = torch.tensor(2.0, requires_grad=True)
    with Recorder() as rec:
        y = x ** 3
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (g2,) = torch.autograd.grad(g, x, create_graph=True)
    source = draw(y, g, g2, order_of=rec.order_of).source
    nodes = dot_nodes(source)
    pows = titled(nodes, "PowBackward0")
    assert sorted(fill(nodes, n) for n in pows) == ["lightgray", "lightpink", "plum1"]
    assert "derivative order 2" in "".join(text(nodes, n) for n in pows)
    assert "fill by derivative order" in source
    np.testing.assert_allclose(g2.item(), 12.0)


def test_theme_and_rankdir():
    loss, names = _encoder_model()
    source = draw(loss, names=names, theme="dark", rankdir="LR").source
    assert "rankdir=LR" in source and 'bgcolor="#1e1e1e"' in source
    assert "lightblue" not in source and 'fillcolor="#1f5f8b"' in source
    custom = draw(loss, names=names, theme={"leaf_fill": "gold"}).source
    assert "fillcolor=gold" in custom and "fillcolor=lightgray" in custom
    with pytest.raises(ValueError, match="rankdir"):
        draw(loss, rankdir="sideways")
    with pytest.raises(ValueError, match="unknown theme"):
        draw(loss, theme="neon")


def test_show_options_change_the_labels():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = a.sum(0, keepdim=True).sum()
    plain = draw(loss, show_values=False, show_grads=False, show_shapes=False).source
    assert "data" not in plain and "grad:" not in plain and "float32" not in plain and "(2,)" not in plain
    attrs = draw(loss, show_attrs=True).source
    assert "dim: (0,)" in attrs and "keepdim: True" in attrs   # torch's _saved_dim is a tuple too
    saved = dot_nodes(draw(a.exp().sum(), show_saved=True).source)
    (result,) = titled(saved, "result")
    assert fill(saved, result) == "orange"


def test_large_tensors_show_min_mean_max():
    a = torch.arange(20.0, requires_grad=True)
    nodes = dot_nodes(draw((a * 1).sum(), names={"a": a}).source)
    (leaf,) = titled(nodes, "a")
    assert "data\nmin 0\nmean 9.5\nmax 19\ngrad: not computed yet" in text(nodes, leaf)


def test_draw_rejects_tensors_without_a_graph():
    with pytest.raises(ValueError, match="does not require grad"):
        draw(torch.ones(2))
    with pytest.raises(TypeError, match="unknown drawing option"):
        to_dot(build_trace([torch.ones(2, requires_grad=True).sum()]), colour="red")


# -- the SVG contract ---------------------------------------------------------------------------
def test_layout_svg_carries_trace_ids_and_classes():
    torch.manual_seed(0)
    ex = examples.barlow()
    trace = record_backward(ex.tensors, names=ex.names, show_saved=True)
    svg = layout_svg(trace)
    groups = svg_groups(svg)
    for node in trace.nodes:
        assert groups[node.id].split() == ["node", node.kind]
    for edge in trace.edges:
        assert groups[edge.id].split()[0] == "edge"
    assert to_dot(trace) == draw(trace).source
    with pytest.raises(TypeError, match="takes a Trace"):
        layout_svg(ex.tensors[0])


def test_diagram_shows_inline_and_saves_by_extension(tmp_path):
    loss, names = _encoder_model()
    diagram = draw(loss, names=names)
    bundle = diagram._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml") and "<svg" in bundle["image/svg+xml"]
    assert diagram._repr_svg_() == bundle["image/svg+xml"]
    assert "nodes" in bundle["text/plain"]
    assert diagram.save(tmp_path / "g.svg").read_text().count('class="node') == len(diagram.view.nodes)
    assert (diagram.save(tmp_path / "g.dot")).read_text() == diagram.source
    with pytest.raises(ValueError, match="cannot tell the format"):
        diagram.save(tmp_path / "g.jpeg")
    assert not (tmp_path / "g.jpeg").exists()


# -- torchviz's make_dot --------------------------------------------------------------------------
def test_make_dot_matches_torchviz():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 2, requires_grad=True)
    y = (x @ w).relu().sum()
    dot = make_dot(y, params={"x": x, "w": w})
    assert isinstance(dot, graphviz.Digraph)
    nodes, edges = dot_nodes(dot.source), dot_edges(dot.source)
    assert len(nodes) == 8 and len(edges) == 7
    (xl,) = titled(nodes, "x")
    (wl,) = titled(nodes, "w")
    assert attr(nodes[xl], "label") == "x\\n (3, 4)" and fill(nodes, xl) == "lightblue"
    assert attr(nodes[wl], "label") == "w\\n (4, 2)"
    assert len(titled(nodes, "AccumulateGrad")) == 2
    assert [fill(nodes, n) for n in titled(nodes, "MmBackward0")] == [None]   # default fill: lightgray
    assert "fontname=monospace" in dot.source and 'size="12,12"' in dot.source

    attrs = make_dot(x.sum(1, keepdim=True).sum(), show_attrs=True).source
    assert 'label="SumBackward1\\n-------------\\ndim    : (1,)\\nkeepdim: True"' in attrs

    saved = make_dot(y, show_saved=True)
    nodes, edges = dot_nodes(saved.source), dot_edges(saved.source)
    oranges = [n for n in nodes if fill(nodes, n) == "orange"]
    # x and w, saved by MmBackward0, are leaves: torchviz draws each as its leaf's node (the leaf's
    # attributes drawn last), joined to MmBackward0 by an undirected edge
    assert sorted(attr(nodes[n], "label") for n in oranges) == ["result\\n (3, 2)"]
    assert all("dir=none" in a for s, d, a in edges if d in oranges)
    (mm,) = titled(nodes, "MmBackward0")
    assert sorted(fill(nodes, d) for s, d, a in edges if s == mm and "dir=none" in a) == ["lightblue", "lightblue"]
    with pytest.raises(TypeError, match="params must map names to tensors"):
        make_dot(y, params={"x": 3})


@pytest.mark.torch
def test_real_torch_tensors_draw_through_the_bridge():
    real = pytest.importorskip("torch")
    x = real.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    nodes = dot_nodes(draw(loss, names={"x": x, "loss": loss}).source)
    assert sorted(text(nodes, n).split("\n")[0] for n in nodes) == ["AccumulateGrad", "MulBackward0",
                                                                  "SumBackward0", "loss", "x"]
    assert "x.grad = ḡ₁ + ḡ₂" in text(nodes, titled(nodes, "AccumulateGrad")[0])
    classic = dot_nodes(make_dot(loss, params={"x": x}).source)
    assert attr(classic[titled(classic, "x")[0]], "label") == "x\\n (2)"


def test_ipython_displays_the_svg_inline():
    pytest.importorskip("IPython")
    from IPython.core.formatters import DisplayFormatter
    loss, names = _encoder_model()
    diagram = draw(loss, names=names)
    data, _ = DisplayFormatter().format(diagram)
    assert data["image/svg+xml"] == diagram.svg()
    assert svg_groups(data["image/svg+xml"])["n0"] == "node leaf"
    assert data["text/plain"] == repr(diagram) == "<gradviz.Diagram: 9 nodes, 8 edges>"


def test_a_leaf_alone_draws_itself_and_its_accumulate_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    nodes = dot_nodes(draw(x, names={"x": x}).source)
    assert sorted(text(nodes, n).split("\n")[0] for n in nodes) == ["AccumulateGrad", "x", "x"]
    assert sorted(fill(nodes, n) for n in nodes) == ["darkolivegreen1", "lightblue", "lightgray"]
