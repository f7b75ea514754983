"""The player at scale: `animate(...).save()` from 1,000 to 20,000 steps, and the saved page in Chromium.

  python benchmarks/player.py [--rounds N] [--sizes 1000,5000,20000] [--unfolded 1000,5000] [--browser-steps N]

A chain x -> y * 1.001 repeated -> sum, of as many backward steps as each size says. For each, in
the same run and interleaved round by round: the engine's own time to build the graph and run its
backward (the yardstick: every figure is also a ratio to it, so it holds on any machine), then
`animate()` (recording, one Graphviz layout, the frames; folded by default: the chain is one box,
whose steps the page holds when it is small enough to step through) and `.save()` (the panels made,
packed and written). Unfolded (max_nodes=None, one frame per step) for the sizes of --unfolded. Medians
of the rounds, CPU time (this process) beside wall time, seconds per step, and the file's size (bytes
per frame shown: the file grows at most linearly with the steps it shows).
Then the folded page of the largest size in Chromium (Playwright, /usr/bin/chromium, 1280x720): the
time to open it (median of the rounds) and of one step change (median of --browser-steps steps): the
script, then the frame that restyles, lays out, paints and commits it (see STEP_JS).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

import gradviz
from gradviz import progress
from gradviz.player import animate
from gradviz.render import render_backend


def chain(steps: int):
    """x -> (steps - 2) multiplications -> sum: steps backward steps (the ops and x's AccumulateGrad)."""
    x = gradviz.randn(4, requires_grad=True)
    y = x
    for _ in range(steps - 2):
        y = y * 1.001
    return y.sum()


def clocks():
    return time.perf_counter(), time.process_time()


def since(start) -> tuple:
    wall, cpu = clocks()
    return wall - start[0], cpu - start[1]


def one_round(steps: int, folded: bool, path: str) -> dict:
    gradviz.manual_seed(0)
    t = clocks()
    chain(steps).backward()
    engine = since(t)
    loss = chain(steps)
    t = clocks()
    anim = animate(loss, **({} if folded else {"max_nodes": None}))
    made = since(t)
    t = clocks()
    anim.save(path)
    saved = since(t)
    return {"engine": engine, "animate": made, "save": saved, "bytes": os.path.getsize(path),
            "nodes": len(anim.trace.nodes), "steps": len(anim.steps), "frames": len(anim.frames),
            "inside": len(anim.inside.frames) if anim.inside else 0}


def table(rows: dict, rounds: int) -> None:
    head = (f"{'chain':<8} {'nodes':>7} {'frames':>7} {'inside':>6} | {'engine':>6} {'animate':>7} {'save':>6} "
            f"{'total':>6} {'×engine':>7} {'ms/step':>7} | cpu: {'engine':>6} {'total':>6} {'ms/step':>7} | "
            f"{'MB':>6} {'B/frame':>7}")
    print(head)
    print("-" * len(head))
    for (steps, folded), r in rows.items():
        med = {k: [statistics.median(x[k][c] for x in r) for c in (0, 1)] for k in ("engine", "animate", "save")}
        total = [med["animate"][c] + med["save"][c] for c in (0, 1)]
        shown = r[0]["frames"] + r[0]["inside"]
        print(f"{'folded' if folded else 'unfolded':<8} {r[0]['nodes']:>7,} {r[0]['frames']:>7,} {r[0]['inside']:>6,} | "
              f"{med['engine'][0]:>6.2f} {med['animate'][0]:>7.2f} {med['save'][0]:>6.2f} {total[0]:>6.2f} "
              f"{total[0] / med['engine'][0]:>7.1f} {total[0] / steps * 1e3:>7.2f} | cpu: {med['engine'][1]:>6.2f} "
              f"{total[1]:>6.2f} {total[1] / steps * 1e3:>7.2f} | {r[0]['bytes'] / 1e6:>6.2f} "
              f"{r[0]['bytes'] / shown:>7.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--unfolded", default="1000,5000")
    parser.add_argument("--browser-steps", type=int, default=60, help="step changes to time in Chromium (0: skip)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    progress.MIN_ITEMS = sys.maxsize        # no progress bars between the figures
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = [(n, True) for n in sizes] + [(int(n), False) for n in args.unfolded.split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "player.html")
        one_round(50, True, path)   # warm-up: imports, the Graphviz backend's first start
        print(f"Graphviz backend: {render_backend()}; medians of {args.rounds} rounds, interleaved; seconds; "
              "×engine: (animate + save) / (build + backward); inside: frames the page holds in its boxes")
        rows = {run: [] for run in runs}
        for _ in range(args.rounds):
            for run in runs:
                rows[run].append(one_round(run[0], run[1], path))
        table(rows, args.rounds)
        if args.browser_steps:
            gradviz.manual_seed(0)
            page = animate(chain(max(sizes))).save(os.path.join(tmp, "big.html"))
            browser_round(page, args.browser_steps, args.rounds)


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


def browser_round(path, steps: int, rounds: int = 3) -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from tests.support.browser_support import chromium
    size = os.path.getsize(path)
    with chromium((1280, 720)) as context:
        opened = []
        for _ in range(rounds):
            page = context.new_page()
            page.goto(path.as_uri())
            page.wait_for_function("() => { const r = document.querySelector('.gv-player'); return r && r.__gv; }")
            opened.append(page.evaluate(OPEN_JS))
            n = page.evaluate("document.querySelector('.gv-player').__gv.length()")
            page.close()
        print(f"page of the largest chain ({size / 1e6:.2f} MB, {n} frames) in Chromium 1280x720, open "
              f"(median of {rounds}): load event {statistics.median(o['load'] for o in opened):.2f} s, "
              f"player ready and painted {statistics.median(o['ready'] for o in opened):.2f} s (target <= 2 s)")
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_function("() => { const r = document.querySelector('.gv-player'); return r && r.__gv; }")
        for motion in ("reduce", "no-preference"):
            page.emulate_media(reduced_motion=motion)
            r = page.evaluate(STEP_JS, [0, min(steps, n - 1)])
            print(f"  step change ({'camera jumps' if motion == 'reduce' else 'camera glides'}, median of "
                  f"{min(steps, n - 1)}): script {r['script']:.1f} ms + render {r['render']:.1f} ms = work "
                  f"{r['work']:.1f} ms (p95 {r['work_p95']:.1f}; target <= 16 ms) | to painted {r['painted']:.1f} ms")


if __name__ == "__main__":
    main()
