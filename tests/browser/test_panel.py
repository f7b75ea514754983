"""The step panel as Chromium draws it: the math is typeset (MathML with a size, never raw LaTeX
or underscore identifiers), the learner's line is highlighted in the code panel, and tensors
are grids with the Trace's numbers in rows and columns."""
import re

import numpy as np
import pytest

from gradviz import formatting
from gradviz.previews import as_matrix

from tests.support.browser_support import chromium
from tests.support import player_programs
from tests.support.player_programs import PROGRAMS

pytestmark = pytest.mark.browser

# LaTeX that leaked into the page: a command, a braced sub/superscript, or an identifier such as
# grad_a / mean_dim / e_k (names made for code, not for a learner reading math)
RAW = re.compile(r"\\[A-Za-z]+|\^\{|_\{|\b[A-Za-z]\w*_\w+\b")


def tracked_animation(name: str, tmp_path):
    return player_programs.tracked_animation(name, tmp_path)


@pytest.fixture(scope="module")
def browser():
    with chromium() as context:
        yield context


def open_player(browser, anim, tmp_path, name="player", viewport=None):
    page = browser.new_page()
    if viewport:
        page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.emulate_media(reduced_motion="reduce")
    page.goto(anim.save(tmp_path / f"{name}.html").as_uri())
    root = page.locator(".gv-player")
    root.wait_for()
    return page, root, errors


# Every frame: go there, open every <details> of the panel, and report its <math> elements (how
# each is displayed, its size) and the panel's visible text.
PANEL_AT = """([root, k]) => {
  root.__gv.go(k, false);
  const panel = root.querySelector('.gv-panel');
  panel.querySelectorAll('details').forEach(d => { d.open = true; });
  const maths = [...panel.querySelectorAll('math')].map(m => {
    const r = m.getBoundingClientRect();
    return {display: getComputedStyle(m).display, w: r.width, h: r.height, text: m.textContent};
  });
  return {frame: k, maths, text: panel.innerText, hidden: panel.querySelectorAll('.gv-math-fallback').length};
}"""


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_formula_is_typeset_math_with_a_size(name, tmp_path, browser):
    anim = tracked_animation(name, tmp_path)
    page, root, errors = open_player(browser, anim, tmp_path, name)
    handle = root.element_handle()
    with_math = 0
    for k in range(len(anim.frames)):
        seen = page.evaluate(PANEL_AT, [handle, k])
        assert seen["hidden"] == 0, seen                       # no formula fell back to plain text
        leaked = RAW.findall(seen["text"])
        assert not leaked, (k, leaked, seen["text"][:400])
        for m in seen["maths"]:
            assert "math" in m["display"], m                  # Chromium typesets it as MathML
            assert m["w"] > 0 and m["h"] > 0, (k, m)
        with_math += bool(seen["maths"])
    assert with_math == len(anim.frames)                       # every step shows its formula
    assert not errors
    page.close()


def current_line(page, root, k: int) -> dict:
    return page.evaluate("""([root, k]) => {
      root.__gv.go(k, false);
      const lit = root.querySelectorAll('.gv-code .gv-current');
      const el = lit[0], box = root.querySelector('.gv-code');
      if (!el) return {count: 0};
      const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
      const number = el.querySelector('.gv-ln').textContent;
      return {count: lit.length, number: Number(number), text: el.textContent.slice(number.length),
              visible: r.top >= b.top - 1 && r.bottom <= b.bottom + 1,
              tint: getComputedStyle(el).backgroundColor !== getComputedStyle(el.parentElement).backgroundColor};
    }""", [root.element_handle(), k])


def test_the_code_panel_highlights_the_line_that_made_the_node(tmp_path, browser):
    anim = tracked_animation("barlow", tmp_path)
    page, root, errors = open_player(browser, anim, tmp_path)

    def line(f):
        source = anim.trace.node(f.node).source if f.node else None
        return source[1] if source else None

    # steps where the line changes from the step before (so a highlight one step late would show):
    # one in forward, one in backward on another line, and the last backward one on a third line
    changes = [f for prev, f in zip(anim.frames, anim.frames[1:]) if line(f) and line(f) != line(prev)]
    first_forward = next(f for f in changes if f.phase == "forward")
    first_backward = next(f for f in changes if f.phase == "backward" and line(f) != line(first_forward))
    late = next(f for f in reversed(changes) if f.phase == "backward"
                and line(f) not in (line(first_forward), line(first_backward)))
    picks = [first_forward, first_backward, late]
    lines = {line(f) for f in picks}
    assert len(lines) == 3, lines                               # three different lines
    for f in picks:
        _, number, text = anim.trace.node(f.node).source
        seen = current_line(page, root, f.index)
        assert seen["count"] == 1, (f.index, seen)
        assert seen["number"] == number and seen["text"].strip() == text, (f.index, seen, number, text)
        assert seen["visible"] and seen["tint"], seen           # scrolled into the code box, and marked
    assert not errors
    page.close()


@pytest.mark.parametrize("viewport", [(1024, 768), (800, 600)], ids=["1024x768", "800x600"])
@pytest.mark.parametrize("name", ["mlp", "long_line"])
def test_a_long_code_line_wraps_in_view_in_a_small_window(tmp_path, browser, viewport, name):
    """The MLP's `loss = torch.nn.functional.cross_entropy(h @ W2 + b2, target)` is wider than the
    code box in a small window, and long_line's loss is four times wider: each wraps under its own
    text and the box centres the whole line, so the lit line is in the box and the box never
    scrolls sideways."""
    anim = tracked_animation(name, tmp_path)
    longest = max(len(line) for line in player_programs.SOURCE[name].splitlines())
    page, root, errors = open_player(browser, anim, tmp_path, name, viewport=viewport)
    wrapped = 0
    for f in anim.frames:
        seen = page.evaluate("""([root, k]) => {
          root.__gv.go(k, false);
          const box = root.querySelector('.gv-code'), el = box.querySelector('.gv-current');
          if (!el) return null;
          const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
          const number = el.querySelector('.gv-ln').getBoundingClientRect();
          const text = document.createRange();
          text.setStart(el.lastChild, 0); text.setEnd(el.lastChild, el.lastChild.length);
          const rows = [...text.getClientRects()];
          return {sideways: box.scrollWidth > box.clientWidth + 1,
                  inBox: r.left >= b.left - 1 && r.right <= b.right + 1 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1,
                  rows: rows.length, textLeft: Math.min(...rows.map(q => q.left)), numberRight: number.right};
        }""", [root.element_handle(), f.index])
        if seen is None:
            continue
        assert not seen["sideways"] and seen["inBox"], (f.index, seen)
        assert seen["textLeft"] >= seen["numberRight"] - 1, (f.index, seen)   # wrapped text clears the numbers
        wrapped += seen["rows"] > 1
    assert wrapped, f"no lit line wrapped (longest line {longest} characters): the test no longer tests wrapping"
    assert not errors
    page.close()


@pytest.mark.parametrize("viewport", [(1280, 720), (1400, 900), (1024, 768)], ids=["1280x720", "1400x900", "1024x768"])
def test_the_file_name_stays_in_view_while_the_line_is_centred(tmp_path, browser, viewport):
    """The code box scrolls to centre the lit line; the file's name at its top stays whole in view, and
    the lit line is never under it (barlow's listing is taller than the box)."""
    anim = tracked_animation("barlow", tmp_path)
    page, root, errors = open_player(browser, anim, tmp_path, viewport=viewport)
    scrolled = 0
    for f in anim.frames:
        seen = page.evaluate("""([root, k]) => {
          root.__gv.go(k, false);
          const box = root.querySelector('.gv-code'), el = box.querySelector('.gv-current');
          if (!el) return null;
          const b = box.getBoundingClientRect(), name = box.querySelector('.gv-file').getBoundingClientRect(),
                r = el.getBoundingClientRect(), top = b.top + box.clientTop;
          return {scrolled: box.scrollTop > 0, nameInView: name.top >= top - 0.5 && name.bottom <= top + box.clientHeight + 0.5,
                  lineBelowName: r.top >= name.bottom - 0.5, lineInBox: r.bottom <= top + box.clientHeight + 0.5,
                  name: box.querySelector('.gv-file').textContent};
        }""", [root.element_handle(), f.index])
        if seen is None:
            continue
        assert seen["nameInView"] and seen["lineBelowName"] and seen["lineInBox"], (f.index, seen)
        assert seen["name"] == "barlow.py"
        scrolled += seen["scrolled"]
    assert scrolled, "the code box never scrolled: the test no longer tests the file name in a scrolled box"
    assert not errors
    page.close()


GRID_AT = """([root, k, edge]) => {
  root.__gv.go(k, false);
  const row = root.querySelector('.gv-panel tr[data-edge="' + edge + '"]');
  const tables = row ? row.querySelectorAll('table.gv-grid') : [];
  const table = tables[tables.length - 1];
  if (!table) return null;
  const rows = [...table.querySelectorAll('tr')].map(tr => [...tr.querySelectorAll('td')].map(td => {
    const r = td.getBoundingClientRect();
    return {text: td.innerText.trim(), x: Math.round(r.left), y: Math.round(r.top), w: r.width, h: r.height,
            bg: getComputedStyle(td).backgroundColor};
  }));
  return rows;
}"""


def test_a_matrix_gradient_is_a_grid_of_the_traces_numbers(tmp_path, browser):
    anim = tracked_animation("mlp", tmp_path)
    page, root, errors = open_player(browser, anim, tmp_path)
    steps = {s.index: s for s in anim.trace.steps}
    checked = 0
    for f in anim.frames:
        if f.phase != "backward":
            continue
        for eid, grad, _ in steps[f.step].flows:
            m = as_matrix(np.asarray(grad.values, dtype=np.float64))
            if m.shape[0] < 2 or m.shape[1] < 2:
                continue                                       # a matrix, not a vector or a scalar
            rows = page.evaluate(GRID_AT, [root.element_handle(), f.index, eid])
            assert rows is not None, (f.index, eid)
            assert [len(r) for r in rows] == [m.shape[1]] * m.shape[0], (f.index, eid, m.shape)
            assert [[c["text"] for c in r] for r in rows] == [[formatting.number(v) for v in r] for r in m]
            # laid out as a grid: a row's cells side by side at one height, a column's cells one above the other
            for r in rows:
                assert len({c["y"] for c in r}) == 1 and [c["x"] for c in r] == sorted({c["x"] for c in r})
            for j in range(m.shape[1]):
                column = [r[j] for r in rows]
                assert len({c["x"] for c in column}) == 1 and [c["y"] for c in column] == sorted({c["y"] for c in column})
            assert all(c["w"] > 0 and c["h"] > 0 for r in rows for c in r)
            # coloured on one diverging scale: opposite signs never share a colour
            signs = {}
            for r, values in zip(rows, m):
                for c, v in zip(r, values):
                    if v:
                        signs.setdefault(c["bg"], set()).add(v > 0)
            assert all(len(s) == 1 for s in signs.values()), signs
            checked += 1
    assert checked >= 3, checked                               # the MLP's weight gradients (and more)
    assert not errors
    page.close()


PANEL_FITS = """([root, k]) => {
  root.__gv.go(k, false);
  const panel = root.querySelector('.gv-panel'), p = panel.getBoundingClientRect();
  const boxes = [...panel.querySelectorAll('.gv-tensor')].map(t => t.getBoundingClientRect())
    .filter(r => r.width > 0);
  return {sideways: panel.scrollWidth > panel.clientWidth + 1,
          outside: boxes.filter(r => r.left < p.left - 1 || r.right > p.right + 1).length,
          blocks: [...panel.querySelectorAll('.gv-jcols')].map(e => e.textContent),
          cut: [...panel.querySelectorAll('.gv-jacs .gv-tensor')].filter(t => t.scrollWidth > t.clientWidth + 1).length};
}"""


@pytest.mark.parametrize("viewport", [(1024, 768), (800, 600)], ids=["1024x768", "800x600"])
def test_the_panel_fits_a_small_window_and_a_long_jacobian_row_comes_in_blocks(tmp_path, browser, viewport):
    """In a small window the step panel never scrolls sideways: each tensor stays in the panel (a
    grid wider than it scrolls in its own box, as does a formula clause too long for it), and a 1×32
    Jacobian (a mean over 32 entries) is shown as labelled blocks of 4 columns that wrap, none cut."""
    import gradviz as torch
    x = torch.linspace(-1, 1, 32, requires_grad=True).reshape(4, 8)
    loss = x.pow(2).mean()

    class Net(torch.nn.Module):   # its formula names conv.weight and conv.bias: one clause ~500 px wide
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 2, 3, padding=1)

        def forward(self, image):
            return self.conv(image).sum()
    net = Net()
    anims = {"mean of 32": torch.animate(loss, names={"x": x, "loss": loss}),
             "mlp": tracked_animation("mlp", tmp_path),
             "conv": torch.animate(net(torch.randn(1, 1, 8, 8)), names=net)}
    for name, anim in anims.items():
        page, root, errors = open_player(browser, anim, tmp_path, name.replace(" ", "_"), viewport=viewport)
        seen_blocks = []
        for f in anim.frames:
            seen = page.evaluate(PANEL_FITS, [root.element_handle(), f.index])
            assert not seen["sideways"] and not seen["outside"], (name, f.index, seen)
            assert not seen["cut"], (name, f.index, seen)
            seen_blocks += seen["blocks"]
        if name == "mean of 32":
            assert seen_blocks[:8] == [f"columns {k}–{k + 3}" for k in range(0, 32, 4)]
        assert not errors
        page.close()


def test_on_a_phone_the_controls_stay_in_reach_while_the_panel_is_read(tmp_path, browser):
    """Stacked at 390×844 the player is taller than the screen: a learner who scrolls down to the
    step panel can press Next (the controls stick to the top) and stepping leaves the page where
    they scrolled it."""
    anim = tracked_animation("barlow", tmp_path)
    page, root, errors = open_player(browser, anim, tmp_path, viewport=(390, 844))
    handle = root.element_handle()
    page.evaluate("r => r.__gv.go(20, false)", handle)
    page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
    where = """r => { const n = r.querySelector('.gv-next').getBoundingClientRect(), p = r.querySelector('.gv-panel');
      const hit = document.elementFromPoint(n.left + n.width / 2, n.top + n.height / 2);
      return {scrollY: Math.round(scrollY), next: !!hit && r.querySelector('.gv-next').contains(hit),
              panel: p.getBoundingClientRect().top < innerHeight, frame: r.__gv.frame()}; }"""
    before = page.evaluate(where, handle)
    assert before["scrollY"] > 0 and before["next"] and before["panel"], before
    for k in range(1, 4):
        page.locator(".gv-next").first.click()
        after = page.evaluate(where, handle)
        assert after == dict(before, frame=before["frame"] + k), (k, after)
    assert not errors
    page.close()


def test_each_step_is_read_from_the_top_of_the_panel(tmp_path, browser):
    """A learner who scrolled down a long panel (the running sum of z2's gradient) and presses Next
    sees the next step from its title, not halfway into it; Prev likewise."""
    anim = tracked_animation("barlow", tmp_path)
    page, root, errors = open_player(browser, anim, tmp_path, viewport=(1280, 720))
    handle = root.element_handle()
    k = next(i for i, f in enumerate(anim.frames) if f.title.startswith("backward") and "Std" in f.title)
    page.evaluate(f"r => r.__gv.go({k}, false)", handle)
    where = """r => { const p = r.querySelector('.gv-panel'), t = r.querySelector('.gv-title').getBoundingClientRect(),
      b = p.getBoundingClientRect(); return {top: p.scrollTop, long: p.scrollHeight > p.clientHeight + 40,
      title: t.top >= b.top - 1 && t.bottom <= b.bottom + 1, frame: r.__gv.frame()}; }"""
    for key in ("ArrowRight", "ArrowLeft", "ArrowLeft"):
        page.evaluate("r => { const p = r.querySelector('.gv-panel'); p.scrollTop = p.scrollHeight; }", handle)
        scrolled = page.evaluate(where, handle)
        assert scrolled["long"] and scrolled["top"] > 0 and not scrolled["title"], scrolled
        page.keyboard.press(key)
        seen = page.evaluate(where, handle)
        assert seen["frame"] == scrolled["frame"] + (1 if key == "ArrowRight" else -1), seen
        assert seen["top"] == 0 and seen["title"], (key, seen)
    assert not errors
    page.close()


def test_a_running_sums_state_is_read_below_its_grids(tmp_path, browser):
    """"(1 of 3 consumers so far; …)" beside a tall grid wrapped around the grid's middle; it is a
    line of its own under the sum."""
    anim = tracked_animation("barlow", tmp_path)
    page, root, errors = open_player(browser, anim, tmp_path, viewport=(1280, 720))
    handle = root.element_handle()
    ks = [i for i, f in enumerate(anim.frames) if "gv-running" in f.text]
    assert ks
    for k in ks:
        page.evaluate(f"r => r.__gv.go({k}, false)", handle)
        rows = page.evaluate("""r => [...r.querySelectorAll('.gv-panel tr.gv-running')].map(tr => {
          const note = tr.querySelector('.gv-note').getBoundingClientRect();
          const grids = [...tr.querySelectorAll('.gv-tensor')].map(g => g.getBoundingClientRect().bottom);
          return {note: note.top, grids: Math.max(...grids), lines: Math.round(note.height / 16)}; })""", handle)
        for row in rows:
            assert row["note"] >= row["grids"] - 1, (k, row)
    assert not errors
    page.close()


# The smallest glyphs of the panel's text at a frame: a script inside a script (the 4 of e^{t₄})
# was set about half the text's size, 8 px
SMALLEST_TEXT = """([root, k]) => {
  root.__gv.go(k, false);
  let least = 99, what = '';
  for (const el of root.querySelector('.gv-panel').querySelectorAll('*')) {
    if (!el.getBoundingClientRect().width) continue;
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < least) { least = px; what = el.textContent; }
  }
  return [least, what];
}"""


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_panel_glyph_is_at_least_10px(name, tmp_path, browser):
    anim = tracked_animation(name, tmp_path)
    page, root, errors = open_player(browser, anim, tmp_path, name, viewport=(1280, 720))
    small = []
    for k in range(root.evaluate("r => r.__gv.length()")):
        least, what = page.evaluate(SMALLEST_TEXT, [root.element_handle(), k])
        if least < 10:
            small.append((k, least, what))
    assert small == [] and errors == []
