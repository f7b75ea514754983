"""The layers import downward only (DESIGN.md): checked on the source, import by import.

LAYERS is the one list of the layers, lowest first; a module may import from its own
layer and the layers below it. Every `import` counts, at the top of a module or inside a
function (an import inside a function is still a dependency, only a hidden one).
"""
from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "gradviz"

# Lowest first. A folder (a subpackage) is one layer as a whole: it is named here, never a module in
# it. The modules at the package's top level are named one by one.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # The array namespace and what every layer shares. events.py is the bus: the engine emits
    # into it, so it imports nothing above the arrays (data flows up, imports point down); the
    # records its events carry (records.py, with previews.py) and the user's code lines
    # (code_lines.py) sit beside it.
    ("backend", ("gradviz.backend", "gradviz.backends", "gradviz.libm", "gradviz.dtypes", "gradviz.accelerator",
                 "gradviz.cuda", "gradviz.formatting", "gradviz.naming", "gradviz.scope", "gradviz.events",
                 "gradviz.records", "gradviz.previews", "gradviz.code_lines", "gradviz._args", "gradviz._calling",
                 "gradviz._warn", "gradviz.settings", "gradviz.progress", "gradviz.bulk")),
    # The math: op records (forward, VJP, display formulas) and the array helpers of the rules.
    ("ops", ("gradviz.ops",)),
    # Tensor, an array with its autograd fields, and what makes one (creation, random numbers). Its
    # methods that are torch's functions or reach the engine are bound by gradviz.tensor_methods.
    ("tensor", ("gradviz.tensor", "gradviz.random", "gradviz.creation")),
    # The graph of nodes, the backward loop, `apply` (an op record run on Tensors), forward-mode AD,
    # custom Functions and torch.autograd's API. The VJP rules of a create_graph backward take
    # Tensor's own namespace (Tensor._namespace), bound with its methods.
    ("autograd", ("gradviz.autograd", "gradviz._tensor_str")),
    # The public functions (gradviz.functions.<m> runs the records of gradviz.ops.<m>), Tensor's
    # methods bound onto the class, and torch.func's API.
    ("functions", ("gradviz.functions", "gradviz.tensor_methods", "gradviz.func", "gradviz.storage")),
    # The library a model is written with, built on Tensors.
    ("nn", ("gradviz.nn", "gradviz.distributions", "gradviz.optim", "gradviz.utils", "gradviz.serialization", "gradviz.testing",
            "gradviz.compiler", "gradviz.amp")),
    # Events -> a plain Trace (the torch bridge is a second source of the same Trace).
    # origins.py picks where the Trace comes from at the public entry points (a gradviz or a torch tensor).
    ("tracing", ("gradviz.tracing", "gradviz.forward_trace", "gradviz.torch_bridge", "gradviz.origins")),
    ("render", ("gradviz.render",)),
    ("player", ("gradviz.player", "gradviz.cli", "gradviz.examples", "gradviz")),
)


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return best


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: pathlib.Path) -> set[str]:
    """Every gradviz module `path` imports (`from . import x` counts as the module x)."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "gradviz")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "gradviz":
                continue
            for alias in node.names:   # `from . import tensor` imports the module gradviz.tensor
                sub = f"{target}.{alias.name}"
                found.add(sub if (ROOT.parent / (sub.replace(".", "/") + ".py")).exists()
                          or (ROOT.parent / sub.replace(".", "/")).is_dir() else target)
    return found


def upward_imports() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(ROOT.rglob("*.py")):
        module = module_name(path)
        own = layer_of(module)
        for target in imports_of(path):
            if layer_of(target) > own:
                found.add((module, target))
    return found


def test_every_module_is_in_a_layer():
    for path in ROOT.rglob("*.py"):
        layer_of(module_name(path))


def test_each_folder_is_one_layer():
    """A subpackage is named in LAYERS as a whole, so every module in one folder shares its layer."""
    folders = {module_name(p.parent / "__init__.py") for p in ROOT.rglob("*.py") if p.parent != ROOT}
    named = {prefix for _, prefixes in LAYERS for prefix in prefixes}
    inside = sorted(prefix for prefix in named if any(prefix.startswith(f + ".") for f in folders))
    assert not inside, f"modules named apart from their folder's layer: {inside}"
    for folder in folders:
        layers = {layer_of(module_name(p)) for p in (ROOT.parent / folder.replace(".", "/")).rglob("*.py")}
        assert len(layers) == 1, f"{folder} spans layers {sorted(LAYERS[i][0] for i in layers)}"


def test_every_import_points_down():
    up = sorted(upward_imports())
    assert not up, "imports from a higher layer:\n" + "\n".join(
        f"  {m} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})" for m, t in up)


def test_views_never_drive_the_engine():
    """The views (render/, player/) read a Trace, or a backward through its Recording (origins.record):
    none of them imports the engine, so a graph from any origin is drawn and stepped by the same code."""
    views = sorted([*(ROOT / "render").rglob("*.py"), *(ROOT / "player").rglob("*.py")])
    assert len(views) > 20
    found = [f"{module_name(path)} imports {target}" for path in views for target in imports_of(path)
             if target == "gradviz.autograd.engine" or target.startswith("gradviz.autograd.engine.")]
    assert not found, found


def test_ops_do_not_hide_imports_in_functions():
    """No function-local import of a gradviz module in ops (such as `from ..tensor import Tensor`, an
    import moved into a function to dodge a cycle); an optional array library (cupyx) may be."""
    hidden = []
    for path in sorted((ROOT / "ops").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom) and (inner.level or (inner.module or "").startswith("gradviz")):
                        hidden.append(f"{module_name(path)}:{inner.lineno}")
    assert not hidden, hidden


def test_no_module_patches_a_global_into_ops():
    """`ops` reads nothing that a higher layer writes into it at import time (such as a Tensor class)."""
    patched = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                   and (n.module or "").split(".")[-1] in ("ops", "core") for a in n.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                            and target.value.id in aliases and target.value.id != "self":
                        patched.append(f"{module_name(path)}:{node.lineno} {target.value.id}.{target.attr}")
    assert not patched, patched


@pytest.mark.parametrize("module, target, expected", [
    ("gradviz.ops.pointwise", "gradviz.backend", False),
    ("gradviz.ops.core", "gradviz.autograd.apply", True),
    ("gradviz.render.dot", "gradviz.player.html", True),
    ("gradviz.player.html", "gradviz.render.dot", False),
])
def test_layer_order(module, target, expected):
    assert (layer_of(target) > layer_of(module)) is expected


def test_functions_import_at_the_top():
    """gradviz.functions imports nothing inside a function: its modules' cycles are broken by
    where code lives (torch.norm, whose matrix forms are linalg's, lives in linalg.py)."""
    hidden = []
    for path in sorted((ROOT / "functions").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hidden += [f"{module_name(path)}:{inner.lineno}" for inner in ast.walk(node)
                           if isinstance(inner, (ast.Import, ast.ImportFrom))]
    assert not hidden, hidden


def test_no_two_modules_import_each_other():
    """A pair of modules importing each other is one job split in two, or an import dodged into a
    function or a TYPE_CHECKING block; a package and its own submodule aside (the package's
    __init__ gathers what the submodule defines)."""
    imports = {module_name(path): imports_of(path) for path in sorted(ROOT.rglob("*.py"))}
    pairs = sorted({tuple(sorted((a, b))) for a, targets in imports.items() for b in targets
                    if b != a and a in imports.get(b, ()) and not (a.startswith(b + ".") or b.startswith(a + "."))})
    assert not pairs, pairs
