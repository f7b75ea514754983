"""The saved player's packed frames (gradviz/player/pack.py): the round trip gives back exactly the
frames Python built, and a long run of alike panels packs small."""
from __future__ import annotations

import json
import re
import warnings

import pytest

import gradviz as torch
from gradviz.player import animate
from gradviz.player.pack import decode, encode, pack, unpack

from tests.support.player_programs import PROGRAMS, animation


def saved_frames(anim) -> list:
    """The frames as the saved HTML holds them (parsed back from the page)."""
    page = anim.html()
    data = re.search(r'<script type="application/json" class="gv-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(data)["frames"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_saved_frames_unpack_to_the_python_frames(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anim = animation(name)
    frames = [f.to_json() for f in anim.frames]
    saved = saved_frames(anim)
    assert len(saved) == len(frames)
    assert unpack(saved) == frames
    # every packed panel refers to an earlier frame, so the player rebuilds them in one pass
    assert all(f["b"] < k for k, f in enumerate(saved) if "H" in f)
    assert any("H" in f for f in saved), name


def test_a_chain_of_alike_steps_packs_to_a_fraction():
    x = torch.randn(4, requires_grad=True)
    y = x
    for _ in range(60):
        y = y * 1.5
    anim = animate(y.sum(), forward=False, max_nodes=None)
    frames = [f.to_json() for f in anim.frames]
    packed = pack(frames)
    assert unpack(packed) == frames
    plain_panels = sum(len(f["h"]) for f in frames)
    packed_panels = sum(len(json.dumps(f.get("H", f.get("h")), ensure_ascii=False)) for f in packed)
    assert packed_panels < plain_panels / 5, (packed_panels, plain_panels)


@pytest.mark.parametrize("text, base", [
    ("", ""), ("abc", ""), ("", "abc"),
    ("<b>1.5</b> and <i>2.5</i> are the gradients", "<b>1.25</b> and <i>2.5</i> are the gradients"),
    ("<td class=\"gv-j4\">2.714</td><td class=\"gv-j4\">2.714</td>", "<td class=\"gv-j4\">2.713</td><td class=\"gv-j4\">2.713</td>"),
    ("repeat repeat repeat repeat repeat repeat", "repeat repeat"),
    ("ünïcödé ∂L/∂x = ḡ ⊙ b, 𝔼[x] <math><mi>x</mi></math>", "ünïcödé ∂L/∂x = ḡ ⊙ a, 𝔼[y] <math><mi>x</mi></math>"),
])
def test_encode_decode_round_trip(text, base):
    pieces = encode(text, base)
    assert decode(pieces, base) == text
    # pieces are new text or (start, length) pairs inside the base (in UTF-16 code units)
    i = 0
    while i < len(pieces):
        if isinstance(pieces[i], str):
            i += 1
        else:
            start, length = pieces[i], pieces[i + 1]
            assert 0 <= start and length > 0 and start + length <= len(base.encode("utf-16-le")) // 2
            i += 2


def test_offsets_count_what_the_browser_counts():
    """JavaScript's substr counts UTF-16 code units: a character beyond U+FFFF (a math letter) before
    a copied stretch counts two, so the copy lands where the browser looks."""
    base = "𝔼 " + "<td>same stretch of text</td>" * 3
    text = "𝔼 " + "<td>same stretch of text</td>" * 2 + "new"
    pieces = encode(text, base)
    assert decode(pieces, base) == text
    copies = [pieces[i:i + 2] for i, p in enumerate(pieces) if not isinstance(p, str) and
              (i == 0 or isinstance(pieces[i - 1], str))]
    assert copies and copies[0][0] == 0
    # in code units "𝔼" is two long: a copy that skips it starts at 2 (JavaScript) not 1 (Python)
    tail = encode("<td>same stretch of text</td>", base)
    assert tail == [3, len("<td>same stretch of text</td>")]


def test_packing_frames_cuts_each_panel_once_and_encodes_as_encode_does():
    """pack() keeps each panel's tokens while it can still be a base; the pieces are encode()'s."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frames = [f.to_json() for f in animation(next(iter(PROGRAMS))).frames]
    kinds, last, packed_frames = [re.sub(r"\d+", "", f.get("t", "")) for f in frames], {}, pack(frames)
    assert sum("H" in f for f in packed_frames) > 1 and len(set(kinds)) > 1
    for k, (frame, packed) in enumerate(zip(frames, packed_frames)):
        b = last.get(kinds[k], k - 1)
        last[kinds[k]] = k
        if "H" in packed:
            assert packed["b"] == b and packed["H"] == encode(frame["h"], frames[b]["h"])

