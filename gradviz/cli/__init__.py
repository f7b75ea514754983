"""The `gradviz` command: `render` the backward graph a script really runs to a diagram, `animate`
it step by step, `demo` the tutorials' examples.

`gradviz render|animate train.py` runs the script as `python train.py` would and records the Nth
backward it starts (`--call N`, default the first): `loss.backward()`, `torch.autograd.backward`,
`torch.autograd.grad`, or gradviz's own, wherever the script calls it (module level, `main()`, a
training loop), naming tensors, parameters and module clusters from the variables of the code that
called it. The script's own output is kept; the script is stopped once that backward is recorded
(`--finish`: the backward really runs and the script goes on to its end). torch's backward is caught
whoever imports torch (the script, a module it imports, importlib). A script that starts no backward
is drawn, saying so, from the tensor its globals hold under `--var` (default `loss`); `--call N` past
the backward calls the script made is an error naming how many it made. `animate --unroll`
records torch's fused nn.LSTM node cell by cell, as `animate(..., unroll=True)` does.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

import gradviz
from ..examples import EXAMPLES
from ..origins import record, trace_of
from ..player import animate
from ..render import backends, draw
from ..tracing import record_backward
from .script import BackwardCatcher, run_script

_ORDINALS = {1: "first", 2: "second", 3: "third"}


def _ordinal(n: int) -> str:
    if n in _ORDINALS:
        return _ORDINALS[n]
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _is_tensor(value) -> bool:
    return hasattr(value, "grad_fn") and hasattr(value, "requires_grad")


def _script_error(script: Path, command: str, exc: BaseException) -> int:
    """The script's own error as Python prints it: a syntax error's message, or the traceback
    through the script's frames (not gradviz's)."""
    if isinstance(exc, SyntaxError):
        print("".join(traceback.format_exception_only(type(exc), exc)), end="", file=sys.stderr)
    else:
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR) and "runpy" not in f.filename]
        print("Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
              + "".join(traceback.format_exception_only(type(exc), exc)), end="", file=sys.stderr)
    print(f"gradviz {command}: {script} stopped with the error above", file=sys.stderr)
    return 1


_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)


def _recorded(args, command: str):
    """Run the script and record the backward it starts: (Trace, name, what to say) or an exit code."""
    script = Path(args.script)
    if not script.is_file():
        print(f"gradviz {command}: no such script: {script}", file=sys.stderr)
        return 2
    options = dict(show_saved=True) if getattr(args, "show_saved", False) else dict(jacobians=command == "animate")
    options["unroll"] = getattr(args, "unroll", False)
    catcher = BackwardCatcher(args.call, args.finish, **options)
    try:
        scope = run_script(script, catcher)
    except (Exception, SystemExit) as exc:   # the script's own error (or its sys.exit(1))
        return _script_error(script, command, exc)
    if catcher.refused is not None:
        print(f"gradviz {command}: {catcher.refused}", file=sys.stderr)
        return 2
    if catcher.caught is not None:
        c = catcher.caught
        root = c.trace.node(c.trace.roots[0]).name if c.trace.roots else ""
        name = root if root.isidentifier() else script.stem
        where = f"{Path(c.file).name}:{c.line}"
        return c.trace, name, f"recorded backward call {c.call} ({c.how} at {where})"
    if catcher.count or args.call > 1:   # never the globals' tensor in place of the backward asked for
        choose = {0: "call loss.backward() in the script, or leave --call out to draw a tensor its globals hold "
                     "(--var NAME)", 1: "choose --call 1"}.get(catcher.count, f"choose --call 1 to {catcher.count}")
        print(f"gradviz {command}: --call {args.call} asks for the {_ordinal(args.call)} backward {script} starts, but "
              f"it started {catcher.count or 'none'} (calls of backward(), autograd.backward or autograd.grad); "
              f"{choose}", file=sys.stderr)
        return 2
    return _from_globals(args, command, script, scope)


def _from_globals(args, command: str, script: Path, scope: dict):
    """A script that started no backward: the tensor its globals hold under --var."""
    tensors = {k: v for k, v in scope.items() if not k.startswith("_") and _is_tensor(v)}
    value = scope.get(args.var)
    if value is None or not _is_tensor(value):
        found = ", ".join(sorted(k for k, v in tensors.items() if v.requires_grad)) or "none"
        print(f"gradviz {command}: {script} never started a backward (loss.backward(), torch.autograd.backward "
              f"or torch.autograd.grad) and defines no tensor named {args.var!r} (tensors that require grad: "
              f"{found}). Call loss.backward() in the script, or name a tensor it computes with --var NAME.",
              file=sys.stderr)
        return 2
    if not value.requires_grad:
        print(f"gradviz {command}: {args.var!r} does not require grad, so it has no graph to draw", file=sys.stderr)
        return 2
    print(f"gradviz {command}: no backward() call was seen while {script} ran, so --call does not apply; "
          f"drawing the tensor its globals hold as {args.var!r} (--var {args.var}). To record the backward "
          f"the script runs, call loss.backward() in it (--call N picks the Nth).", file=sys.stderr)
    names = {k: v for k, v in tensors.items() if v.requires_grad}   # the script's names, as torchviz's params
    if command == "render":
        return trace_of((value,), names, show_saved=args.show_saved, caller=scope), args.var, ""
    try:
        return record(value, names=names, caller=scope, jacobians=True, unroll=getattr(args, "unroll", False)).run(), args.var, ""
    except ValueError as err:   # --unroll on a graph with no fused recurrent node
        print(f"gradviz {command}: {err}", file=sys.stderr)
        return 2


def cmd_render(args) -> int:
    found = _recorded(args, "render")
    if isinstance(found, int):
        return found
    trace, name, said = found
    out = Path(args.output or f"{name}.svg")
    diagram = draw(trace, rankdir="LR" if args.lr else "TB", max_nodes="auto" if args.max_nodes is None else args.max_nodes,
                   collapse="scopes" if args.collapse_scopes else None, theme=args.theme,
                   show_values=not args.no_values)
    try:
        diagram.save(out)
    except (backends.GraphvizNotFoundError, backends.GraphvizRenderError, ValueError) as err:
        print(f"gradviz render: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({len(trace.nodes)} nodes, {len(trace.edges)} edges)" + (f"; {said}" if said else ""))
    return 0


def cmd_animate(args) -> int:
    found = _recorded(args, "animate")
    if isinstance(found, int):
        return found
    trace, name, said = found
    animation = animate(trace, rankdir="LR" if args.lr else "TB")
    out = Path(args.output or f"{name}.html")
    try:
        animation.save(out)
    except (backends.GraphvizNotFoundError, backends.GraphvizRenderError, ValueError, RuntimeError) as err:
        print(f"gradviz animate: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({len(animation.steps)} backward steps, {len(animation.frames)} frames)"
          + (f"; {said}" if said else ""))
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


def _call_number(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is no backward call: the first is 1")
    return n


def _script_options(parser) -> None:
    parser.add_argument("--call", type=_call_number, default=1,
                        help="record the Nth backward the script starts (default 1: the first)")
    parser.add_argument("--finish", action="store_true",
                        help="let that backward really run and the script go on to its end (default: stop it there)")
    parser.add_argument("--var", default="loss",
                        help="for a script that starts no backward: the tensor in its globals to draw")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradviz", description="See PyTorch-style autograd at work.")
    sub = parser.add_subparsers(dest="command", required=True)

    render = sub.add_parser("render", help="draw the backward graph a script runs")
    render.add_argument("script", help="a Python script (run as __main__)")
    _script_options(render)
    render.add_argument("-o", "--output", help="the file to write: .svg .png .pdf or .dot (default: the recorded tensor's name, e.g. loss.svg)")
    render.add_argument("--lr", action="store_true", help="lay out left to right")
    render.add_argument("--show-saved", action="store_true", help="draw the tensors saved for backward")
    render.add_argument("--no-values", action="store_true", help="leave values out of the labels")
    render.add_argument("--collapse-scopes", action="store_true", help="draw each outermost scope as one box")
    render.add_argument("--max-nodes", type=int, default=None,
                        help="fold to at most this many nodes (0: fold nothing); by default a graph folds "
                             "when its drawing would exceed a few screens")
    render.add_argument("--theme", choices=["light", "dark"], default=None)
    render.set_defaults(func=cmd_render)

    anim = sub.add_parser("animate", help="write a step-by-step HTML player (or GIF) of the backward a script runs")
    anim.add_argument("script", help="a Python script (run as __main__)")
    _script_options(anim)
    anim.add_argument("-o", "--output", help="the file to write: .html or .gif (default: the recorded tensor's name, e.g. loss.html)")
    anim.add_argument("--lr", action="store_true", help="lay out left to right")
    anim.add_argument("--unroll", action="store_true",
                      help="record torch's fused nn.LSTM node cell by cell and step by step, with torch's gradients "
                           "(as animate(..., unroll=True))")
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
