"""The HTML player's build time and size, and its step changes in Chromium.

  python benchmarks/player.py [--rounds N] [--browser-steps N]

Part 1: 200 backward steps over a 300-node graph.

The graph: 100 leaves of 4 elements (each with its AccumulateGrad), 99 alternating
add/mul ops, a sum and the output: 301 nodes, 200 backward steps. Each round times
`animate()` (trace, one Graphviz layout, the backward, frames with local Jacobians)
and `.html()`, separately and together. Targets: under 2 s and under 2 MB.
Medians of the rounds are printed.
Part 2: a 2,001-node chain with 1,999 backward steps (drawn unfolded, max_nodes=None): the saved
HTML's size, and in Chromium (Playwright, /usr/bin/chromium, 1280x720) the time to open it (median
of the rounds) and of one step change (median of --browser-steps steps): the script, then the
frame that restyles, lays out, paints and commits it (see STEP_JS).
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import gradviz
from gradviz.player import animate
from gradviz.render import render_backend

TARGET_SECONDS, TARGET_BYTES = 2.0, 2_000_000


def graph(n_params: int = 100, size: int = 4):
    params = [gradviz.randn(size, requires_grad=True) for _ in range(n_params)]
    h = params[0]
    for i, p in enumerate(params[1:]):
        h = h * p if i % 2 else h + p
    return h.sum()


def one_round(forward: bool) -> dict:
    loss = graph()
    t0 = time.perf_counter()
    anim = animate(loss, forward=forward, max_nodes=None)   # unfolded: 200 steps, as stated
    t1 = time.perf_counter()
    page = anim.html()
    t2 = time.perf_counter()
    return {"animate": t1 - t0, "html": t2 - t1, "total": t2 - t0, "bytes": len(page.encode("utf-8")),
            "nodes": len(anim.trace.nodes), "steps": len(anim.steps), "frames": len(anim.frames)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--browser-steps", type=int, default=100,
                        help="step changes to time in Chromium on the 2,000-node player (0: skip)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    gradviz.manual_seed(0)
    one_round(False)    # warm-up: imports, the Graphviz backend's first start
    print(f"Graphviz backend: {render_backend()}; medians of {args.rounds} rounds")
    for forward in (False, True):
        rounds = [one_round(forward) for _ in range(args.rounds)]
        med = {k: statistics.median(r[k] for r in rounds) for k in ("animate", "html", "total", "bytes")}
        first = rounds[0]
        label = "backward only" if not forward else "forward + backward"
        ok = med["total"] < TARGET_SECONDS and med["bytes"] < TARGET_BYTES
        print(f"{label:>19}: {first['nodes']} nodes, {first['steps']} steps, {first['frames']} frames | "
              f"animate {med['animate'] * 1e3:7.1f} ms  html {med['html'] * 1e3:6.1f} ms  "
              f"total {med['total'] * 1e3:7.1f} ms (target < {TARGET_SECONDS:.0f} s) | "
              f"{med['bytes'] / 1e6:.2f} MB (target < {TARGET_BYTES / 1e6:.0f} MB) | {'ok' if ok else 'MISSED'}")
    if args.browser_steps:
        browser_round(args.browser_steps, args.rounds)




# -- the player in Chromium: a 2,000-node graph, 2,000 backward steps ------------------------------
# One step change, split where the browser splits it: the script (api.next(): states, labels, the
# panel, the camera) runs synchronously; the next animation frame then restyles, lays out, paints and
# commits. "render" runs from that frame's requestAnimationFrame callback to a task posted from it,
# which the browser runs once the frame is painted and committed. "work" is their sum: the main
# thread's time for the step, what must fit in a 16 ms frame. "to painted" adds the wait for the
# frame to begin (the display's clock, not work).
STEP_JS = """async ([k, n]) => {
  const api = document.querySelector('.gv-player').__gv;
  const frame = () => new Promise(r => requestAnimationFrame(() => {
    const a = performance.now(), c = new MessageChannel();
    c.port1.onmessage = () => r([a, performance.now()]);
    c.port2.postMessage(0);
  }));
  api.go(k);
  await frame(); await frame();
  const script = [], render = [], work = [], painted = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    api.next();
    const t1 = performance.now();
    const [a, b] = await frame();
    script.push(t1 - t0); render.push(b - a); work.push(t1 - t0 + b - a); painted.push(b - t0);
    await frame();                    // a quiet frame between steps
  }
  const med = a => a.slice().sort((x, y) => x - y)[a.length >> 1];
  const p95 = a => a.slice().sort((x, y) => x - y)[Math.floor(a.length * .95)];
  return {script: med(script), render: med(render), work: med(work), work_p95: p95(work), painted: med(painted)};
}"""
# Opening: from navigation to the ready player's first painted frame, in the page's own clock.
OPEN_JS = """async () => {
  await new Promise(r => requestAnimationFrame(() => { const c = new MessageChannel(); c.port1.onmessage = r; c.port2.postMessage(0); }));
  const nav = performance.getEntriesByType('navigation')[0];
  return {ready: performance.now() / 1e3, load: nav ? nav.loadEventEnd / 1e3 : NaN};
}"""


def chain(n_ops: int = 1997):
    """x -> n_ops multiplications -> sum: n_ops + 4 nodes (leaf, AccumulateGrad, ops, sum, output),
    n_ops + 2 backward steps."""
    x = gradviz.randn(4, requires_grad=True)
    y = x
    for _ in range(n_ops):
        y = y * 1.001
    return y.sum()


def browser_round(steps: int, rounds: int = 3) -> None:
    import os
    import re
    import sys
    import tempfile
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from browser_support import chromium
    loss = chain()
    t0 = time.perf_counter()
    anim = animate(loss, forward=False, max_nodes=None)
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = anim.save(os.path.join(tmp, "big.html"))
        t2 = time.perf_counter()
        page_text = path.read_text(encoding="utf-8")
        size = len(page_text.encode("utf-8"))
        svg = len(page_text[page_text.find("<svg"):page_text.find("</svg>")].encode("utf-8"))
        data = re.search(r'<script type="application/json" class="gv-data">(.*?)</script>', page_text, re.S)
        print(f"player of {len(anim.trace.nodes):,} nodes x {len(anim.steps):,} steps: animate {t1 - t0:.1f} s, "
              f"save {t2 - t1:.1f} s | HTML {size / 1e6:.2f} MB (SVG {svg / 1e6:.2f} MB, "
              f"frames {len(data.group(1).encode('utf-8')) / 1e6:.2f} MB)")
        with chromium((1280, 720)) as context:
            opened = []
            for _ in range(rounds):
                page = context.new_page()
                page.goto(path.as_uri())
                page.wait_for_function("() => { const r = document.querySelector('.gv-player'); return r && r.__gv; }")
                opened.append(page.evaluate(OPEN_JS))
                page.close()
            print(f"  Chromium 1280x720, open (median of {rounds}): load event {statistics.median(o['load'] for o in opened):.2f} s, "
                  f"player ready and painted {statistics.median(o['ready'] for o in opened):.2f} s")
            page = context.new_page()
            page.goto(path.as_uri())
            page.wait_for_function("() => { const r = document.querySelector('.gv-player'); return r && r.__gv; }")
            for motion in ("reduce", "no-preference"):
                page.emulate_media(reduced_motion=motion)
                r = page.evaluate(STEP_JS, [len(anim.frames) // 2, steps])
                print(f"  step change ({'camera jumps' if motion == 'reduce' else 'camera glides'}, median of {steps}): "
                      f"script {r['script']:.1f} ms + render {r['render']:.1f} ms = work {r['work']:.1f} ms "
                      f"(p95 {r['work_p95']:.1f}; target < 16 ms) | to painted {r['painted']:.1f} ms")


if __name__ == "__main__":
    main()
