"""Diagram draw time: DOT build and SVG layout for graphs of 100, 1,000 and 5,000 ops.

  python benchmarks/draw.py [--rounds N] [--backend system|wasm|both]

Three shapes of graph, each at three sizes (counted in ops, not nodes):
  chain  y = y * 1.001 repeated (one long chain of MulBackward0)
  mlp    (x @ W_i + b_i).tanh() per layer, each layer in its own scope, fresh weights
  rnn    h = (h @ W + x).tanh() with one W and x shared by every step
For each: the time to walk the graph into a Trace, to build the DOT (plan what to
fold by default to fit a few screens, labels, clusters), and to lay it out to SVG. Medians of
the rounds are printed; the layout is run on a fresh DOT each round.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import time

import gradviz
from gradviz.render import Diagram, backends
from gradviz.render.dot import DrawOptions
from gradviz.tracing import build_trace

SIZES = (100, 1_000, 5_000)


def chain(ops: int):
    x = gradviz.randn(4, requires_grad=True)
    y = x
    for _ in range(ops - 1):
        y = y * 1.001
    return y.sum()


def mlp(ops: int):
    x = gradviz.randn(4, 8)
    for i in range(ops // 3):
        w = gradviz.randn(8, 8, requires_grad=True)
        b = gradviz.randn(8, requires_grad=True)
        with gradviz.scope(f"layer{i}"):
            x = (x @ w + b).tanh()
    return x.sum()


def rnn(ops: int):
    w = gradviz.randn(8, 8, requires_grad=True)
    x = gradviz.randn(1, 8, requires_grad=True)
    h = gradviz.zeros(1, 8)
    for _ in range(ops // 3):
        h = (h @ w + x).tanh()
    return h.sum()


def measure(build, ops: int, backend: str, rounds: int) -> dict:
    times = {"trace": [], "dot": [], "svg": []}
    nodes = drawn = 0
    for _ in range(rounds):
        gradviz.manual_seed(0)
        root = build(ops)
        t0 = time.perf_counter()
        trace = build_trace([root])
        t1 = time.perf_counter()
        diagram = Diagram(trace, DrawOptions())
        t2 = time.perf_counter()
        backends.render_svg(diagram.source, backend)
        t3 = time.perf_counter()
        times["trace"].append(t1 - t0)
        times["dot"].append(t2 - t1)
        times["svg"].append(t3 - t2)
        nodes, drawn = len(trace.nodes), len(diagram.view.nodes) + len(diagram.view.groups)
    result = {k: statistics.median(v) for k, v in times.items()}
    result.update(nodes=nodes, drawn=drawn)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backend", choices=["system", "wasm", "both"], default="both")
    args = parser.parse_args()
    which = ["system", "wasm"] if args.backend == "both" else [args.backend]
    if "system" in which and not shutil.which("dot"):
        print("no system dot on PATH: measuring the wasm backend only")
        which = ["wasm"]
    if "wasm" in which:
        backends.render_svg("digraph { a }", "wasm")   # compile the module once, outside the timings
    print(f"medians of {args.rounds} rounds; times in seconds; folded by default (max_nodes=\"auto\")")
    header = f"{'graph':<6} {'ops':>6} {'nodes':>6} {'drawn':>6} {'backend':<7} {'trace':>7} {'dot':>7} " \
             f"{'svg':>7} {'dot+svg':>8}"
    print(header)
    print("-" * len(header))
    for build in (chain, mlp, rnn):
        for ops in SIZES:
            for backend in which:
                r = measure(build, ops, backend, args.rounds)
                print(f"{build.__name__:<6} {ops:>6,} {r['nodes']:>6,} {r['drawn']:>6,} {backend:<7} "
                      f"{r['trace']:>7.3f} {r['dot']:>7.3f} {r['svg']:>7.3f} {r['dot'] + r['svg']:>8.3f}")


if __name__ == "__main__":
    main()
