"""Where `gradviz.animate(loss, model=model)` spends its time on a torch model, phase by phase.

  python benchmarks/animate_phases.py [--models resnet18,gpt] [--runs 9]

The models are peers.py's (tests/support/torch_models.py; resnet18-224 and gpt-6l at a learner's real
size). Each run: torch's own forward and backward, then the forward again and `animate` on it, each
after a garbage collection; medians of the runs after two warm-ups. Times are CPU time of the process
and of the Graphviz it runs (`resource` counts children to the microsecond), each phase measured by
wrapping the function that does it:

  record          naming, walking the graph, freezing what it may not keep (`origins.record`)
  Trace made      the first read of the Trace: every node's and step's record (`separate_orders`)
  plan            what to draw: folding, with each label's size (`dot.plan_for`), which completes
                  the node records a label shows (their constants and attributes read from torch)
  DOT text        the page's DOT (`dot.to_digraph`)
  Graphviz        `dot` laying the page out, its process start included (`backends.render_svg`)
  backward+hooks  torch's backward with a hook per node, each gradient previewed as it is handed over
"""
from __future__ import annotations

import argparse
import functools
import gc
import pathlib
import resource
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import gradviz  # noqa: E402
from gradviz.player import html  # noqa: E402
from gradviz.render import backends, diagram  # noqa: E402
from tests.support.torch_models import MODELS, REAL_SIZE  # noqa: E402

PHASES = [(html, "record", "record"), (html, "separate_orders", "Trace made"), (diagram, "plan_for", "plan"),
          (diagram, "to_digraph", "DOT text"), (backends, "render_svg", "Graphviz"), (html, "_run", "backward+hooks")]


def cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(spent: dict, owner, name: str, label: str) -> None:
    """Wrap owner.name so its CPU time adds to spent[label]."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        start = cpu()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + cpu() - start
    setattr(owner, name, wrapper)


def measure(case, runs: int, spent: dict) -> dict:
    rows: dict = {}
    for i in range(runs + 2):
        gc.collect()
        start = cpu()
        case.loss().backward()
        plain = cpu() - start
        case.model.zero_grad(set_to_none=True)
        gc.collect()
        spent.clear()
        start = cpu()
        loss = case.loss()
        forward = cpu() - start
        start = cpu()
        gradviz.animate(loss, model=case.model)
        animate = cpu() - start
        if i >= 2:   # two warm-ups
            for label, seconds in {"torch forward + backward": plain, "forward": forward, "animate": animate,
                                   **spent}.items():
                rows.setdefault(label, []).append(seconds)
    return {label: statistics.median(values) for label, values in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,gpt")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    spent: dict = {}
    for owner, name, label in PHASES:
        timed(spent, owner, name, label)
    cases = {**MODELS, **REAL_SIZE}
    print(f"torch {torch.__version__}, 1 thread, CPU time with Graphviz's; medians of {args.runs} runs")
    for model in args.models.split(","):
        row = measure(cases[model](), args.runs, spent)
        ratio = (row["forward"] + row["animate"]) / row["torch forward + backward"]
        print(f"\n{model}: forward + animate = {ratio:.2f}x torch's forward + backward")
        for label, seconds in row.items():
            print(f"  {label:26s} {seconds * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
