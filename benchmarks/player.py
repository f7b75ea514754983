"""The HTML player's build time and size: 200 backward steps over a 300-node graph.

  python benchmarks/player.py [--rounds N]

The graph: 100 leaves of 4 elements (each with its AccumulateGrad), 99 alternating
add/mul ops, a sum and the output: 301 nodes, 200 backward steps. Each round times
`animate()` (trace, one Graphviz layout, the backward, frames with local Jacobians)
and `.html()`, separately and together. Targets: under 2 s and under 2 MB.
Medians of the rounds are printed.
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
    anim = animate(loss, forward=forward)
    t1 = time.perf_counter()
    page = anim.html()
    t2 = time.perf_counter()
    return {"animate": t1 - t0, "html": t2 - t1, "total": t2 - t0, "bytes": len(page.encode("utf-8")),
            "nodes": len(anim.trace.nodes), "steps": len(anim.steps), "frames": len(anim.frames)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
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


if __name__ == "__main__":
    main()
