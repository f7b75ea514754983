"""gradviz's torch bridge beside torchviz, torchview and torchlens on four real PyTorch models.

  python benchmarks/peers.py [--rounds N] [--models mlp,resnet18,gpt,lstm] [--no-animate] [--no-peers]
  python benchmarks/peers.py --no-peers --rounds 3 --models resnet18-224,gpt-6l   # at a learner's real size

The models (tests/support/torch_models.py, random initialisation, no downloads): a 2-layer MLP
with cross-entropy; ResNet-18 layer for layer as torchvision writes it, input 1x3x64x64; a
nanoGPT-style GPT (2 layers, 2 heads, d=64, tied embeddings); Embedding -> nn.LSTM -> Linear.

Times are CPU time of the process and its children (`--clock cpu`, the default: a stepped backward
runs on a worker thread, Graphviz runs as a child) or elapsed time (`--clock wall`); torch runs on one
thread (`--threads`). Per model, in interleaved rounds (medians printed): torch's own forward and
backward; gradviz recording torch's backward (forward, then `record_torch(loss, model=model).run()`:
what torch alone can tell while its backward runs, the gradients and the order of the steps, and
what the graph may not keep; the Trace is made when a view first reads it), and its ratio to
torch's forward and backward in the same round; the same with the Trace made (every node's and
step's record, the values still read when a view shows them); gradviz's `animate(loss,
model=model)` (recording, the Graphviz layout and every frame, with every value they show), and its
ratio; the same with the player's page made (`.html()`, every panel: what a notebook displays and
`.save` writes); and each peer making its picture (forward, graph, SVG):
torchviz 0.0.3 `make_dot(loss, params)`, torchview 0.2.7 `draw_graph(model, inputs)`,
torchlens 2.36.1 `trace` + `backward` + `draw_backward` (run after the others, on a model of its
own: it leaves hooks on the parameters it traced). A peer that is not installed is
skipped and the table says so. "nodes" counts the nodes of the picture each tool makes.
"""
from __future__ import annotations

import argparse
import gc
import os
import pathlib
import statistics
import sys
import tempfile
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import gradviz  # noqa: E402
from gradviz.render import backends  # noqa: E402
from gradviz.torch_bridge import record_torch  # noqa: E402
from tests.support.torch_models import MODELS, REAL_SIZE  # noqa: E402

CASES = {**MODELS, **REAL_SIZE}

def _cpu() -> float:
    """CPU time of this process (all its threads: a stepped backward runs on a worker thread) and of
    the children it waited for (Graphviz's dot)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


clock = _cpu   # --clock wall: time.perf_counter

# what each tool's picture shows: backward nodes, values, gradients, steps of the backward
SHOWS = {"gradviz": ("yes", "yes", "yes", "yes"), "torchviz": ("yes", "no", "no", "no"),
         "torchview": ("no (modules, forward)", "no (shapes)", "no", "no"),
         "torchlens": ("yes", "no (shapes)", "shapes only", "no")}


def _count_nodes(dot_source: str) -> int:
    return sum(1 for line in dot_source.splitlines()
               if "[" in line and "->" not in line and line.strip()[:1] not in ("node", "edge", "graph", "}"))


def run_torch(case) -> dict:
    t0 = clock()
    case.loss().backward()
    seconds = clock() - t0
    case.model.zero_grad(set_to_none=True)
    return {"seconds": seconds}


def run_gradviz(case) -> dict:
    t0 = clock()
    trace = record_torch(case.loss(), model=case.model).run()
    return {"seconds": clock() - t0, "nodes": len(trace.nodes), "steps": len(trace.steps)}


def run_made(case) -> dict:
    """Recording, then the Trace made as a view's first read makes it (every node's and step's
    record; the values still read when shown)."""
    t0 = clock()
    trace = record_torch(case.loss(), model=case.model).run()
    nodes, steps = len(trace.nodes), len(trace.steps)
    return {"seconds": clock() - t0, "nodes": nodes, "steps": steps}


def run_animate(case) -> dict:
    t0 = clock()
    try:
        anim = gradviz.animate(case.loss(), model=case.model)
    except backends.GraphvizRenderError as err:   # reported in the table, not hidden
        return {"seconds": float("nan"), "nodes": 0, "steps": 0, "failed": str(err).splitlines()[-1]}
    return {"seconds": clock() - t0, "nodes": len(anim.trace.nodes), "steps": len(anim.steps)}


def run_page(case) -> dict:
    t0 = clock()
    anim = gradviz.animate(case.loss(), model=case.model)
    anim.html()
    return {"seconds": clock() - t0, "nodes": len(anim.trace.nodes), "steps": len(anim.steps)}


def run_torchviz(case) -> dict:
    import torchviz
    t0 = clock()
    dot = torchviz.make_dot(case.loss(), params=dict(case.model.named_parameters()))
    dot.pipe(format="svg")
    return {"seconds": clock() - t0, "nodes": _count_nodes(dot.source)}


def run_torchview(case) -> dict:
    import torchview
    t0 = clock()
    graph = torchview.draw_graph(case.model, input_data=[case.inputs[0]], depth=10)
    graph.visual_graph.pipe(format="svg")
    return {"seconds": clock() - t0, "nodes": _count_nodes(graph.visual_graph.source)}


class _WithLoss(torch.nn.Module):
    """The model and its loss as one module, so torchlens logs the forward up to the loss."""

    def __init__(self, case):
        super().__init__()
        self.model, self.loss_of = case.model, case.loss_of

    def forward(self, *inputs):
        return self.loss_of(self.model, *inputs)


def run_torchlens(case) -> dict:
    import torchlens
    from torchlens.options import CaptureOptions
    t0 = clock()
    # unwrap_when_done: torch's functions are given back unwrapped, so the other tools' rounds run plain torch
    options = CaptureOptions(save_grads=True, backward_ready=True, unwrap_when_done=True)
    log = torchlens.trace(_WithLoss(case), list(case.inputs), capture=options)
    log.backward(log[log.output_layers[0]].out)
    with tempfile.TemporaryDirectory() as folder:
        source = log.draw_backward(vis_outpath=os.path.join(folder, "backward"), vis_save_only=True,
                                   vis_fileformat="svg")
    return {"seconds": clock() - t0, "nodes": _count_nodes(source)}


PEERS = {"torchviz": run_torchviz, "torchview": run_torchview, "torchlens": run_torchlens}


def installed(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def _rounds(runs: dict, case, rounds: int) -> dict:
    for run in runs.values():   # warm-up: first calls and imports
        run(case)
    results: dict = {key: [] for key in runs}
    for _ in range(rounds):
        for key, run in runs.items():
            gc.collect()   # no run pays for collecting what the one before it left (animate leaves much)
            results[key].append(run(case))
    return results


def measure(name: str, rounds: int, animate: bool, peers: dict) -> dict:
    """Interleaved rounds of torch, gradviz and the peers on one model; torchlens last, on a model
    of its own: it leaves hooks on the parameters it traced, which would slow the others' backward."""
    late = {k: v for k, v in peers.items() if k == "torchlens"}
    runs = {"torch": run_torch, "gradviz": run_gradviz, "made": run_made,
            **({"animate": run_animate, "page": run_page} if animate else {}),
            **{k: v for k, v in peers.items() if k not in late}}
    results = _rounds(runs, CASES[name](), rounds)
    if late:
        results.update(_rounds(late, CASES[name](), rounds))
    out = {key: {**rs[-1], "seconds": statistics.median(r["seconds"] for r in rs)} for key, rs in results.items()}
    for key in ("gradviz", "made", "animate", "page"):   # each a ratio to torch's forward and backward of the same round
        if key in results:
            out[key]["ratio"] = statistics.median(g["seconds"] / t["seconds"]
                                                  for g, t in zip(results[key], results["torch"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--no-animate", action="store_true", help="leave out gradviz.animate (the layout)")
    parser.add_argument("--no-peers", action="store_true", help="torch and gradviz only")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                        help="cpu (default): CPU time of the process and its children, so other processes on a "
                             "shared machine do not count; wall: elapsed time")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch's intra-op threads (default 1: on a shared machine more threads make every "
                             "tool's timing depend on what else runs)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(args.threads)
    global clock
    clock = _cpu if args.clock == "cpu" else time.perf_counter
    peers = {} if args.no_peers else {k: v for k, v in PEERS.items() if installed(k)}
    missing = [k for k in PEERS if k not in peers and not args.no_peers]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {args.clock} time; "
          f"medians of {args.rounds} rounds")
    if missing:
        print("not installed, skipped: " + ", ".join(missing))
    print("| model | tool | seconds | nodes | backward nodes | values | gradients | steps |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        m = measure(name, args.rounds, not args.no_animate, peers)
        print(f"| {name} | torch forward + backward | {m['torch']['seconds']:.3f} | | | | | |")
        shows = " | ".join(SHOWS["gradviz"][:3])
        print(f"| {name} | gradviz record (×{m['gradviz']['ratio']:.2f} torch) | {m['gradviz']['seconds']:.3f} | "
              f"{m['gradviz']['nodes']} | {shows} | {m['gradviz']['steps']} |")
        print(f"| {name} | gradviz record, Trace made (×{m['made']['ratio']:.2f} torch) | {m['made']['seconds']:.3f} | "
              f"{m['made']['nodes']} | {shows} | {m['made']['steps']} |")
        if "animate" in m and "failed" in m["animate"]:
            print(f"| {name} | gradviz animate | failed: {m['animate']['failed']} | | | | | |")
        elif "animate" in m:
            print(f"| {name} | gradviz animate (×{m['animate']['ratio']:.1f} torch) | {m['animate']['seconds']:.3f} | "
                  f"{m['animate']['nodes']} | {shows} | "
                  f"{m['animate']['steps']} |")
        if "page" in m and "animate" in m and "failed" not in m["animate"]:
            print(f"| {name} | gradviz animate and its page (×{m['page']['ratio']:.1f} torch) | "
                  f"{m['page']['seconds']:.3f} | {m['page']['nodes']} | {shows} | {m['page']['steps']} |")
        for peer in peers:
            print(f"| {name} | {peer} | {m[peer]['seconds']:.3f} | {m[peer]['nodes']} | "
                  + " | ".join(SHOWS[peer]) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
