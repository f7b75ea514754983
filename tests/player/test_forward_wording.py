"""Forward mode says what forward mode does: a tensor read by several ops sends each a copy of its
tangent (nothing is summed), and no forward view borrows backward's words (ḡ, .grad, gradient)."""
from __future__ import annotations

import re

import gradviz
from gradviz.render import to_dot


def f(x, b):
    a = x.sin() * b
    return a * 2 + a * 3


def anim():
    x, b = gradviz.tensor([0.5, -1.0]), gradviz.tensor([2.0, 3.0])
    return gradviz.animate_jvp(f, (x, b), (gradviz.tensor([1.0, 0.0]), gradviz.tensor([0.0, 1.0])))


def test_a_fan_out_is_a_copy_of_the_tangent_not_a_sum():
    a = anim()
    source = to_dot(a.trace)
    assert "ȧ copied to 2 ops" in source
    assert "ḡ" not in source and not re.search(r"\bgrad\b", source)   # no fan-in sum, no .grad column


def test_no_forward_view_speaks_of_gradients():
    a = anim()
    page = a.fragment()
    words = re.sub(r"<style.*?</style>|<script.*?</script>", "", page, flags=re.S)
    assert "ḡ" not in words and "gradient" not in words.lower()
    assert not any("ḡ" in fr.caption + fr.text or re.search(r"\bgrad\b", fr.caption) for fr in a.frames)
    # the legend in plain words, like backward's "arrow thickness: size of the gradient, ×10 per step"
    assert "arrow thickness: size of the tangent, ×10 per step" in words


def test_the_race_legend_names_both_in_plain_words():
    race = gradviz.forward_vs_reverse(lambda x: (x * 2).tanh(), gradviz.tensor([0.5, -1.0]))
    assert "forward passes carry a tangent, backward passes a gradient · arrow thickness: its size, ×10 per step" \
        in race.fragment()
