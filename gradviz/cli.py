"""The `gradviz` command: `render` a script's tensor to a diagram, `animate` its backward,
`demo` the tutorials' examples."""
from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path

import gradviz
from .code_lines import set_source_tracking, source_tracking
from .examples import EXAMPLES
from .player import animate
from .render import backends, draw
from .origins import is_torch, trace_of
from .torch_bridge import record_torch_backward
from .tracing import Recorder, graph_freed, leaf_keys, name_intermediates, outputs_of, record_backward


def _script_globals(path: Path) -> dict:
    """Run a script as __main__ (argv and sys.path as if run directly) and return its globals.
    Source tracking is on while it runs, so each node knows the line of the script that made it."""
    old_argv, old_path, old_tracking = sys.argv, list(sys.path), source_tracking()
    sys.argv = [str(path)]
    sys.path.insert(0, str(path.parent.resolve()))
    set_source_tracking(True)
    try:
        return runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
        set_source_tracking(old_tracking)


def _is_tensor(value) -> bool:
    return hasattr(value, "grad_fn") and hasattr(value, "requires_grad")


def _script_tensor(args, command: str):
    """Run the script and find --var in it: (tensor, names) or an exit code after a message."""
    script = Path(args.script)
    if not script.is_file():
        print(f"gradviz {command}: no such script: {script}", file=sys.stderr)
        return 2
    scope = _script_globals(script)
    tensors = {k: v for k, v in scope.items() if not k.startswith("_") and _is_tensor(v)}
    value = scope.get(args.var)
    if value is None or not _is_tensor(value):
        found = ", ".join(sorted(k for k, v in tensors.items() if v.requires_grad)) or "none"
        print(f"gradviz {command}: {script} defines no tensor named {args.var!r} "
              f"(tensors that require grad: {found})", file=sys.stderr)
        return 2
    if not value.requires_grad:
        print(f"gradviz {command}: {args.var!r} does not require grad, so it has no graph to draw", file=sys.stderr)
        return 2
    # the script's variable names label the leaves, as torchviz's params would
    return value, {k: v for k, v in tensors.items() if v.requires_grad}


def cmd_render(args) -> int:
    found = _script_tensor(args, "render")
    if isinstance(found, int):
        return found
    value, names = found
    # names match tensors by identity, so the script's tensors of the other library name nothing
    trace = trace_of((value,), names, show_saved=args.show_saved)
    out = Path(args.output or f"{args.var}.svg")
    diagram = draw(trace, rankdir="LR" if args.lr else "TB", max_nodes="auto" if args.max_nodes is None else args.max_nodes,
                   collapse="scopes" if args.collapse_scopes else None, theme=args.theme,
                   show_values=not args.no_values)
    try:
        diagram.save(out)
    except (backends.GraphvizNotFoundError, backends.GraphvizRenderError, ValueError) as err:
        print(f"gradviz render: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({len(trace.nodes)} nodes, {len(trace.edges)} edges)")
    return 0


def cmd_animate(args) -> int:
    # listen while the script runs: if it calls backward itself (freeing the graph), the
    # forward and that backward are already recorded
    recorder = Recorder(jacobians=True)
    with recorder:
        found = _script_tensor(args, "animate")
    if isinstance(found, int):
        return found
    value, names = found
    if is_torch(value):
        try:
            target = (record_torch_backward(value, params=names),)
        except RuntimeError as err:
            print(f"gradviz animate: {err}\n(the script already ran a backward through {args.var!r}, which freed "
                  f"its graph: call {args.var}.backward(retain_graph=True) in the script, or leave the call out "
                  "and let gradviz animate run it)", file=sys.stderr)
            return 1
    elif graph_freed([value]):
        name_intermediates(recorder, names)
        trace = recorder.trace(outputs_of([value], names), leaf_names=leaf_keys(names))
        if not trace.steps:
            print(f"gradviz animate: the graph behind {args.var!r} was freed before any recorded backward ran "
                  f"through it; call {args.var}.backward(retain_graph=True) in the script, or leave the call out",
                  file=sys.stderr)
            return 1
        target = (trace,)   # the script's own backward, recorded as it ran
    else:
        target = (value,)
    animation = animate(*target, names=names, rankdir="LR" if args.lr else "TB")
    out = Path(args.output or f"{args.var}.html")
    try:
        animation.save(out)
    except (backends.GraphvizNotFoundError, backends.GraphvizRenderError, ValueError, RuntimeError) as err:
        print(f"gradviz animate: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({len(animation.steps)} backward steps, {len(animation.frames)} frames)")
    return 0


def _write_svg(name: str, trace, diagram, out: Path) -> list:
    return [diagram.save(out / f"{name}.svg")]


def _write_png(name: str, trace, diagram, out: Path) -> list:
    if backends.render_backend() != "system":
        return []   # PNG needs the system dot; the SVG is written either way
    return [diagram.save(out / f"{name}.png")]


def _write_html(name: str, trace, diagram, out: Path) -> list:
    path = out / f"{name}-backward.html"
    animate(trace).save(path)
    return [path]


# writer(name, trace, diagram, folder) -> paths written: one entry per kind of output the demo writes
DEMO_WRITERS = [_write_svg, _write_png, _write_html]


def cmd_demo(args) -> int:
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    wanted = args.only or list(EXAMPLES)
    unknown = [w for w in wanted if w not in EXAMPLES]
    if unknown:
        print(f"gradviz demo: unknown example {unknown[0]!r}; choose from {', '.join(EXAMPLES)}", file=sys.stderr)
        return 2
    for name in wanted:
        gradviz.manual_seed(0)   # the same pictures on every run
        example = EXAMPLES[name]()
        # the local Jacobians too: the demo's players show what the notebooks' show
        trace = record_backward(example.tensors, example.gradient, names=example.names, jacobians=True)
        diagram = draw(trace, rankdir="LR" if args.lr else "TB")
        written = []
        for writer in DEMO_WRITERS:
            written += writer(name, trace, diagram, out)
        print(f"{example.title}: " + ", ".join(str(p) for p in written))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradviz", description="See PyTorch-style autograd at work.")
    sub = parser.add_subparsers(dest="command", required=True)

    render = sub.add_parser("render", help="draw the backward graph of a tensor a script computes")
    render.add_argument("script", help="a Python script (run as __main__)")
    render.add_argument("--var", default="loss", help="the name of the tensor in the script's globals")
    render.add_argument("-o", "--output", help="the file to write: .svg .png .pdf or .dot (default VAR.svg)")
    render.add_argument("--lr", action="store_true", help="lay out left to right")
    render.add_argument("--show-saved", action="store_true", help="draw the tensors saved for backward")
    render.add_argument("--no-values", action="store_true", help="leave values out of the labels")
    render.add_argument("--collapse-scopes", action="store_true", help="draw each outermost scope as one box")
    render.add_argument("--max-nodes", type=int, default=None,
                        help="fold to at most this many nodes (0: fold nothing); by default a graph folds "
                             "when its drawing would exceed a few screens")
    render.add_argument("--theme", choices=["light", "dark"], default=None)
    render.set_defaults(func=cmd_render)

    anim = sub.add_parser("animate", help="write a step-by-step HTML player (or GIF) of a tensor's backward")
    anim.add_argument("script", help="a Python script (run as __main__)")
    anim.add_argument("--var", default="loss", help="the name of the tensor in the script's globals")
    anim.add_argument("-o", "--output", help="the file to write: .html or .gif (default VAR.html)")
    anim.add_argument("--lr", action="store_true", help="lay out left to right")
    anim.set_defaults(func=cmd_animate)

    demo = sub.add_parser("demo", help="render the tutorials' examples into a folder")
    demo.add_argument("-o", "--output", default=os.path.join("assets", "demo"), help="the folder to write")
    demo.add_argument("--only", nargs="*", help="some of the examples, by name")
    demo.add_argument("--lr", action="store_true", help="lay out left to right")
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except backends.GraphvizNotFoundError as err:
        print(f"gradviz: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
