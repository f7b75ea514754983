"""What the browser tests measure in a player on a page: can the learner see the step, and read it?

Shared by the saved-player tests and the JupyterLab tests. Each function runs one script in the
page and returns plain data, so a failing assertion prints what was seen.
"""
from __future__ import annotations

# The colours of JupyterLab's Dark theme that a notebook output sees (from @jupyterlab/theme-dark-extension)
JUPYTERLAB_DARK = """
body { background: #111111; color: rgba(255,255,255,1); margin: 0; padding: 12px;
  --jp-layout-color0: #111111; --jp-layout-color1: #212121; --jp-content-font-color1: rgba(255,255,255,1);
  --jp-ui-font-color1: rgba(255,255,255,0.87); --jp-ui-font-family: system-ui, sans-serif;
  --jp-code-font-family: monospace; }
"""

# Where is the active node, what is on top of its centre, how big is its text, does the page scroll sideways?
# And the step's key line: the tensor an AccumulateGrad writes into .grad (grids.result marks it
# gv-total), seen in the panel without scrolling it (keyInView; null when the step writes nothing).
SEE_STEP = """(root) => {
  // the stage on screen: a folded box opened in place covers the graph's (which may draw the same node)
  const api = root.__gv, id = root.dataset.node,
        st = root.querySelector('.gv-stage.gv-inset:not([hidden])') || root.querySelector('.gv-stage'),
        g = id && st.querySelector('g[id="' + id + '"]');
  const doc = document.scrollingElement || document.documentElement;
  const out = {frame: api.frame(), node: id, sideways: doc.scrollWidth > doc.clientWidth, keyInView: null};
  const panel = root.querySelector('.gv-panel'), key = panel && panel.querySelector('.gv-write .gv-total');
  if (key) {
    const p = panel.getBoundingClientRect(), k = key.getBoundingClientRect(), bottom = p.top + panel.clientTop + panel.clientHeight;
    out.keyInView = k.top >= p.top - 1 && k.bottom <= bottom + 1 && k.bottom <= window.innerHeight;
    out.keyBottom = Math.round(k.bottom - p.top);
    out.panelHeight = panel.clientHeight;
  }
  if (!g) return out;
  const r = g.getBoundingClientRect(), stage = st.getBoundingClientRect();
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2, hit = document.elementFromPoint(cx, cy);
  out.inStage = r.left >= stage.left - 1 && r.right <= stage.right + 1 && r.top >= stage.top - 1 && r.bottom <= stage.bottom + 1;
  out.onScreen = cx >= 0 && cy >= 0 && cx <= window.innerWidth && cy <= window.innerHeight;
  out.hit = hit ? (hit.closest('[id]') || hit).id || hit.tagName : null;
  out.unobstructed = !!hit && g.contains(hit);
  out.textPx = Math.min(...[...g.querySelectorAll('text')].map(t =>
      parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a));
  return out;
}"""

# Every visible text in the player: its colour against what is behind it (WCAG contrast).
CONTRAST = """(root) => {
  const rgba = s => { const m = s.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const lum = c => { const v = c.slice(0, 3).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const ratio = (a, b) => { const [h, l] = [lum(a), lum(b)].sort((x, y) => y - x); return (h + 0.05) / (l + 0.05); };
  const bgOf = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const worst = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || el.closest('.gv-sr, style, script, svg, option')) continue;
    const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    if (!r.width || cs.visibility === 'hidden' || el.closest('[hidden], details:not([open]) > :not(summary)')) continue;
    let fg = rgba(cs.color), bg = bgOf(el);
    if (el.closest('button:disabled')) continue;   // WCAG exempts inactive controls
    fg = over(fg, bg);
    worst.push({text: n.textContent.trim().slice(0, 30), ratio: ratio(fg, bg)});
  }
  const stageBg = bgOf(root.querySelector('.gv-stage'));
  for (const t of root.querySelectorAll('.gv-stage svg text')) {
    const g = t.closest('g.node, g.edge, g.gv-labels, g.cluster');
    const cs = getComputedStyle(t);
    if (cs.visibility === 'hidden' || (g && getComputedStyle(g).visibility === 'hidden')) continue;
    let bg = stageBg;
    if (g && g.matches('g.node, g.cluster')) {
      const shape = g.querySelector(':scope > polygon, :scope > path');
      const sc = getComputedStyle(shape), fill = rgba(sc.fill);
      bg = over([fill[0], fill[1], fill[2], parseFloat(sc.fillOpacity) * fill[3]], stageBg);
    }
    const fill = rgba(cs.fill);
    worst.push({text: 'svg: ' + t.textContent.slice(0, 30), ratio: ratio(over(fill, bg), bg)});
  }
  worst.sort((a, b) => a.ratio - b.ratio);
  return worst.slice(0, 5);
}"""


# SEE_STEP at each of the frames `ks`, the camera jumping (the page emulates reduced motion)
SEE_STEPS = "([root, ks]) => ks.map(k => { root.__gv.go(k); return (" + SEE_STEP + ")(root); })"


def settle(page, root) -> None:
    """Wait until the camera has stopped moving."""
    page.wait_for_function("r => !r.__gv.camera.moving()", arg=root.element_handle(), timeout=5000)
