"""The GIF of a forward animation wears the HTML player's colours: forward.css paints the edge states
ahead, carrying and carried with the theme's idle, flowing and done colours, and the GIF's DOT
attributes come from that one theme (render/theme.py), arrowheads left pointing forward."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import gradviz
from gradviz.player import gif
from gradviz.player.frames import state_at
from gradviz.render import to_dot
from gradviz.render.theme import DARK_PALETTE, FORWARD_EDGE_STATES, LIGHT_PALETTE, state_styles

CSS = (Path(gradviz.__file__).parent / "player" / "assets" / "forward.css").read_text()


def test_forward_css_and_the_gif_take_one_theme_colour_per_state():
    for state, like in FORWARD_EDGE_STATES.items():
        painted = set(re.findall(rf"g\.edge\.gv-{state} > path \{{ stroke: var\(--gv-(\w+)\)", CSS))
        assert painted == {like}, (state, painted)
        for palette in (LIGHT_PALETTE, DARK_PALETTE):
            _, edges = state_styles(palette)
            assert edges[state]["color"] == getattr(palette, like) == edges[like]["color"]


def f(x, b):
    a = x.sin() * b
    return a * 2 + a * 3


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs the system Graphviz")
def test_each_forward_frame_of_the_gif_is_coloured_by_state_and_width(tmp_path):
    x, b = gradviz.tensor([0.5, -1.0]), gradviz.tensor([2.0, 3.0])
    anim = gradviz.animate_jvp(f, (x, b), (gradviz.tensor([10.0, 0.0]), gradviz.tensor([0.0, 1.0])))
    positioned = gif._run(["dot", "-Tdot"], to_dot(anim.trace, **anim.draw_options).encode()).decode()
    kinds = anim.stage.kinds
    _, edges = state_styles(LIGHT_PALETTE)
    seen = set()
    widths: dict = {}
    for frame in anim.frames:
        widths.update(frame.widths)
        state = state_at(anim.frames, frame.index)
        out = gif.restyle(positioned, state, frame.labels, kinds, widths=widths)
        for ident, st in state.items():
            if kinds.get(ident) != "edge" or st not in FORWARD_EDGE_STATES:
                continue
            statement = re.search(rf"\[[^\]]*\bid={ident}\b[^\]]*\]", out).group(0)
            assert f'color="{edges[st]["color"]}"' in statement, (ident, st, statement)
            assert 'dir="back"' not in statement          # a tangent runs the way the arrow points
            if ident in widths:
                assert f'penwidth="{gif.PENWIDTHS[widths[ident]]}"' in statement
            seen.add(st)
    assert seen == set(FORWARD_EDGE_STATES)
    saved = gif.save_gif(anim, tmp_path / "jvp.gif", max_frames=3)
    assert saved.read_bytes()[:6] == b"GIF89a"
