"""Drawing at scale: `draw` of graphs of 1,000 to 20,000 nodes, seconds per node, CPU and wall.

  python benchmarks/draw.py [--rounds N] [--sizes 1000,5000,20000] [--backend system|wasm]

Two shapes of graph, each at the sizes given (counted in nodes of the recorded Trace):
  chain  y = y * 1.001 repeated: one long chain of MulBackward0
  gpt    examples/gpt.py's GPT (embeddings, blocks of attention and MLP, LayerNorm, the loss) with as
         many blocks as make the size; each block is a module, so the default fold boxes them
For each, in the same run and interleaved round by round: the engine's own time to build the graph
and run its backward (the yardstick: every figure is also given as a ratio to it, so it holds on any
machine), and `gradviz.draw(...).svg()` split into recording the Trace, the DOT build (planning the
fold, the labels) and Graphviz's layout. Medians of the rounds; CPU time (this process: the DOT build
is Python) beside wall time (Graphviz runs in a subprocess: its CPU is not in this process's clock, so
the wall is what a learner waits for). "per node" divides by the Trace's nodes: flat means linear.
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
import statistics
import sys
import time

import gradviz
from gradviz import progress
from gradviz.render import Diagram, backends
from gradviz.render.dot import DrawOptions
from gradviz.tracing import build_trace

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "gpt.py"
GPT_NODES_PER_BLOCK = 56      # nodes a block of examples/gpt.py adds to the Trace (n_head=2, n_embd=16)
GPT_NODES_BASE = 20           # embeddings, final LayerNorm, head and loss


def chain(nodes: int):
    x = gradviz.randn(4, requires_grad=True)
    y = x
    for _ in range(nodes - 4):      # a leaf, its AccumulateGrad, the sum and the output besides
        y = y * 1.001
    return y.sum(), None


_GPT = None


def gpt(nodes: int):
    global _GPT
    if _GPT is None:
        spec = importlib.util.spec_from_file_location("gpt_example", EXAMPLE)
        _GPT = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_GPT)
    chars, encode, _ = _GPT.encoder(_GPT.TEXT)
    layers = max(1, round((nodes - GPT_NODES_BASE) / GPT_NODES_PER_BLOCK))
    model = _GPT.GPT(_GPT.GPTConfig(vocab_size=len(chars), block_size=8, n_layer=layers, n_head=2, n_embd=16))
    _, loss = model(gradviz.tensor([encode(_GPT.TEXT[:8])]), gradviz.tensor([encode(_GPT.TEXT[1:9])]))
    return loss, dict(model.named_parameters())


def clocks():
    return time.perf_counter(), time.process_time()


def since(start) -> tuple:
    wall, cpu = clocks()
    return wall - start[0], cpu - start[1]


def one_round(build, nodes: int, backend: str) -> dict:
    gradviz.manual_seed(0)
    t = clocks()
    root, _ = build(nodes)
    root.backward()
    engine = since(t)                                  # the yardstick: build + backward
    gradviz.manual_seed(0)
    root, names = build(nodes)
    t = clocks()
    trace = build_trace([root], names)
    traced = since(t)
    t = clocks()
    diagram = Diagram(trace, DrawOptions())
    dot = since(t)
    t = clocks()
    backends.render_svg(diagram.source, backend)
    svg = since(t)
    return {"engine": engine, "trace": traced, "dot": dot, "svg": svg, "nodes": len(trace.nodes),
            "drawn": len(diagram.view.nodes) + len(diagram.view.groups)}


def median(rounds: list, key: str, clock: int) -> float:
    return statistics.median(r[key][clock] for r in rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--backend", choices=["system", "wasm"], default="system")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    progress.MIN_ITEMS = sys.maxsize        # no progress bars between the figures
    backends.render_svg("digraph { a }", args.backend)      # the backend's first start, outside the timings
    print(f"medians of {args.rounds} rounds, interleaved; seconds; Graphviz: {args.backend}; "
          "draw = trace + dot + svg; ×engine: draw / (build + backward)")
    head = (f"{'graph':<6} {'nodes':>7} {'drawn':>6} | {'engine':>7} {'trace':>7} {'dot':>7} {'svg':>7} "
            f"{'draw':>7} {'×engine':>8} | {'µs/node':>8} | cpu: {'engine':>7} {'trace+dot':>9} {'µs/node':>8}")
    print(head)
    print("-" * len(head))
    for build in (chain, gpt):
        rounds = {n: [] for n in sizes}
        for _ in range(args.rounds):
            for n in sizes:
                rounds[n].append(one_round(build, n, args.backend))
        for n in sizes:
            r = rounds[n]
            wall = {k: median(r, k, 0) for k in ("engine", "trace", "dot", "svg")}
            cpu = {k: median(r, k, 1) for k in ("engine", "trace", "dot")}
            draw = wall["trace"] + wall["dot"] + wall["svg"]
            nodes = r[0]["nodes"]
            print(f"{build.__name__:<6} {nodes:>7,} {r[0]['drawn']:>6,} | {wall['engine']:>7.2f} {wall['trace']:>7.2f} "
                  f"{wall['dot']:>7.2f} {wall['svg']:>7.2f} {draw:>7.2f} {draw / wall['engine']:>8.1f} | "
                  f"{draw / nodes * 1e6:>8.0f} | cpu: {cpu['engine']:>7.2f} {cpu['trace'] + cpu['dot']:>9.2f} "
                  f"{(cpu['trace'] + cpu['dot']) / nodes * 1e6:>8.0f}")


if __name__ == "__main__":
    main()
