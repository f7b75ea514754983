"""What a user passes to the renderer (themes, names) never reaches the SVG or the player unescaped,
and animate() takes the same names as draw()."""
import xml.etree.ElementTree as ET

import pytest

import gradviz as torch
from gradviz.render.theme import Theme, resolve_theme


def _loss(name=None):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.name = name
    return x, (x * x).sum()


@pytest.mark.parametrize("key,value", [
    ("fontname", 'Arial" onmouseover="alert(1)'),
    ("fontname", "x</text><script>alert(1)</script>"),
    ("bgcolor", 'red" onload="alert(1)'),
    ("leaf_fill", "url(javascript:alert(1))"),
    ("fontsize", "10;x"),
    ("name", "dark<"),
    ("order_fills", ("lightgray", 'plum1"><script>')),
    ("fontcolor", 42),
])
def test_theme_values_that_could_break_out_of_an_attribute_are_refused(key, value):
    with pytest.raises(ValueError, match=f"theme {key}="):
        resolve_theme({key: value})
    _, loss = _loss()
    with pytest.raises(ValueError):
        torch.draw(loss, theme={key: value})


def test_plain_theme_values_pass_and_reach_the_svg():
    theme = resolve_theme({"fontname": "DejaVu Sans, Arial", "bgcolor": "#ffeedd", "leaf_fill": "0.5 0.3 1.0",
                           "op_fill": "/blues9/3", "fontsize": "11.5"})
    assert theme.fontname == "DejaVu Sans, Arial"
    _, loss = _loss()
    svg = torch.draw(loss, theme=theme).svg()
    ET.fromstring(svg.encode("utf-8"))   # well-formed
    assert "DejaVu Sans, Arial" in svg
    assert Theme(name="dark").name == "dark"


def test_a_hostile_tensor_name_is_escaped_in_the_svg_and_the_player():
    hostile = '<script>alert(1)</script>" onload="y'
    _, loss = _loss(hostile)
    svg = torch.draw(loss).svg()
    ET.fromstring(svg.encode("utf-8"))
    page = torch.animate(loss).html()
    for text in (svg, page):
        assert "<script>alert(1)" not in text
        assert 'onload="y' not in text


@pytest.mark.parametrize("naming", ["dict", "attribute"])
def test_animate_takes_non_string_names_as_draw_does(naming):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    names = {123: x} if naming == "dict" else None
    if naming == "attribute":
        x.name = 42
    shown = "123" if naming == "dict" else "42"
    assert shown in torch.draw(loss, names=names).svg()
    animation = torch.animate(loss, names=names)
    assert len(animation) > 0
    assert shown in animation.svg
    assert shown in animation.html()


def test_palette_colours_that_could_break_out_of_the_css_are_refused():
    from dataclasses import replace

    from gradviz.render.theme import LIGHT_PALETTE
    with pytest.raises(ValueError, match="theme bg="):
        replace(LIGHT_PALETTE, bg="red}body{background:url(x)")
    with pytest.raises(ValueError, match="theme orders="):
        replace(LIGHT_PALETTE, orders=("#fff", "red;x"))
    assert replace(LIGHT_PALETTE, bg="#123456").bg == "#123456"
