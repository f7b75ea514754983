"""The step panel's math is at least as large as the text around it.

On every frame of the three browser-test programs, every symbol of the panel's formulas that is
not itself a script (a subscript, a superscript, the limits under a sum) is set at no less than
the panel's body text size, fractions included (inline MathML would shrink a fraction's parts by
a script level), in one math face.
"""
import pytest

from tests.support.browser_support import chromium, open_player
from tests.support.player_programs import PROGRAMS, tracked_animation

pytestmark = pytest.mark.browser

SIZES = """([root, ks]) => ks.map(k => {
  root.__gv.go(k, false);
  const panel = root.querySelector('.gv-panel');
  panel.querySelectorAll('details').forEach(d => { d.open = true; });
  const body = parseFloat(getComputedStyle(root.querySelector('.gv-text')).fontSize);
  const scripted = el => { for (let p = el; p && p.localName !== 'math'; p = p.parentElement) {
    const up = p.parentElement;
    if (up && /^(msub|msup|msubsup|munder|mover|munderover)$/.test(up.localName) && up.firstElementChild !== p) return true;
  } return false; };
  const small = [], faces = new Set();
  panel.querySelectorAll('math mi, math mn').forEach(el => {
    if (scripted(el) || !el.getBoundingClientRect().height) return;
    const s = getComputedStyle(el);
    faces.add(s.fontFamily);
    if (parseFloat(s.fontSize) < body - 0.01) small.push(el.textContent + ' ' + s.fontSize);
  });
  return {frame: k, body, small, faces: [...faces]};
})"""


@pytest.mark.parametrize("name", PROGRAMS)
def test_panel_math_is_at_least_body_text_size(name, tmp_path):
    anim = tracked_animation(name, tmp_path)
    path = anim.save(tmp_path / f"{name}.html")
    with chromium((1280, 720)) as context:
        page, root = open_player(context, path)
        seen = page.evaluate(SIZES, [root.element_handle(), list(range(len(anim.frames)))])
        for step in seen:
            assert step["body"] >= 13, step
            assert not step["small"], step
            assert len(step["faces"]) <= 1, step
        page.close()
