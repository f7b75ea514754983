"""The op reference: every record of gradviz.ops (its PyTorch node, formula and VJP per input) with
the public functions and Tensor methods that record it, read from the registry and from the source
of gradviz.functions. `python -m gradviz.reference > docs/ops.md` (make docs) writes it; a test
checks that the file is current and that every differentiable record is reachable."""
from __future__ import annotations

import ast
import importlib
import pathlib

import gradviz
import gradviz.nn.functional as nn_functional
from .functions.declared import methods as declared_methods
from .ops import registry

FUNCTIONS = pathlib.Path(__file__).resolve().parent / "functions"
SPACES = (("gradviz", gradviz), ("gradviz.linalg", gradviz.linalg), ("gradviz.nn.functional", nn_functional))
OPS = pathlib.Path(__file__).resolve().parent / "ops"


def _record_names(tree: ast.Module, module: str, in_ops: bool = False) -> dict:
    """Local name -> registry key ("pointwise.EXP") of every record a module of gradviz.ops or
    gradviz.functions imports or defines (a record has one key, wherever it is imported)."""
    key_of = {id(op): key for key, op in registry.ops().items()}
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and (
                (node.level in (1, 2) and node.module.startswith("ops.")) or (in_ops and node.level == 1)) \
                and (OPS / f"{node.module.split('.')[-1]}.py").exists():
            source = importlib.import_module(f"gradviz.ops.{node.module.split('.')[-1]}")
            for alias in node.names:
                key = key_of.get(id(getattr(source, alias.name, None)))
                if key:
                    names[alias.asname or alias.name] = key
    own = OPS / f"{module}.py"
    if own.exists():
        source = importlib.import_module(f"gradviz.ops.{module}")
        for name, value in vars(source).items():
            if id(value) in key_of:
                names.setdefault(name, key_of[id(value)])
    return names


def _reached(tree: ast.Module, records: dict) -> dict:
    """Public function -> the records it applies, itself or through the functions of its module it calls."""
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    aliases = {t.id: n.value.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
               for t in n.targets if isinstance(t, ast.Name)}    # clip = clamp

    def names(fn):   # the names fn reads, less its parameters (threshold_'s `threshold` is not the function)
        params = {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
        return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} - params
    made = {}   # _neg = _make_unary(NEG): a private function made by a factory from records
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    made[target.id] = {records[n] for n in names(node.value) if n in records}
    found = {}
    for name, fn in defs.items():
        if name.startswith("_"):
            continue
        seen, stack, got = {name}, [fn], set()
        while stack:
            used = names(stack.pop())
            got |= {records[n] for n in used if n in records}
            got |= {key for n in used if n in made for key in made[n]}
            for n in used:
                if n in defs and n not in seen:   # a helper, or another function it builds on
                    seen.add(n)
                    stack.append(defs[n])
        found[name] = got
    for alias, target in aliases.items():
        if target in found and not alias.startswith("_"):
            found[alias] = found[target]
    for name, got in made.items():   # exp = _make_unary(EXP): a public function made by a factory
        if not name.startswith("_") and got:
            found.setdefault(name, set()).update(got)
    return found


def callers() -> dict:
    """Registry key -> sorted public names (gradviz.f, Tensor.f) that record it."""
    methods = declared_methods()
    out: dict = {}
    for path in sorted(FUNCTIONS.glob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn, keys in _reached(tree, _record_names(tree, path.stem)).items():
            own = getattr(importlib.import_module(f"gradviz.functions.{path.stem}"), fn, None)
            exposure = getattr(own, "__exposure__", None)
            if exposure is not None and not exposure.names:   # a Tensor method only (Tensor.unfold)
                public = [f"Tensor.{name}" for name in exposure.methods]
            else:
                public = [f"{where}.{fn}" for where, space in SPACES if getattr(space, fn, None) is not None][:1] or \
                    [f"{where}.{name}" for where, space in SPACES for name, value in vars(space).items()
                     if value is own and not name.startswith("_")][:1]   # exported under another name (linalg.cross)
                bound = methods.get(fn)   # a declared method is this function's only when it is the one declared
                if callable(getattr(gradviz.Tensor, fn, None)) and bound in (None, own):
                    public.append(f"Tensor.{fn}")
            public = public or [f"gradviz.functions.{path.stem}.{fn}"]
            for key in keys:
                out.setdefault(key, set()).update(public)
    for key, op in registry.ops().items():   # the functions the records' exposures make
        if op.expose is not None and op.expose.make is not None:
            names = [f"gradviz.{n}" for n in op.expose.names] + [f"Tensor.{n}" for n in op.expose.methods]
            out.setdefault(key, set()).update(names)
    for module, name in (("tensor", "Tensor"), ("tensor_methods", "_Methods")):   # Tensor.fill_, .uniform_...
        tree = ast.parse((FUNCTIONS.parent / f"{module}.py").read_text(encoding="utf-8"))
        methods_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
        for fn, keys in _reached(methods_class, _record_names(tree, module)).items():
            for key in keys:
                out.setdefault(key, set()).add(f"Tensor.{fn}")
    return {k: sorted(v) for k, v in out.items()}


def applied_by_rules() -> set:
    """Registry keys a record's own VJP records (xp.apply(RECORD, ...) with create_graph=True, or
    through the Tensor namespace the engine hands the rules)."""
    found = set()
    namespace = ast.parse((OPS.parent / "functions" / "namespace.py").read_text(encoding="utf-8"))
    for node in ast.walk(namespace):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "index_ops":
            found.add(f"index.{node.attr}")
    for path in sorted(OPS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        records = _record_names(tree, path.stem, in_ops=True)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "apply" \
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in records:
                found.add(records[node.args[0].id])
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple) \
                    and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "").endswith(
                        ("linear_pair", "_separable")):
                adjoint = node.targets[0].elts[-1]
                if isinstance(adjoint, ast.Name) and adjoint.id in records:
                    found.add(records[adjoint.id])
    for path in sorted(FUNCTIONS.glob("*.py")):   # _recorded_as(TANH, lambda ...: apply(TANH_BACKWARD, ...))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        records = _record_names(tree, path.stem)
        for node in tree.body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and getattr(node.value.func, "id", "") == "_recorded_as":
                found |= {records[n.id] for arg in node.value.args[1:] for n in ast.walk(arg)
                          if isinstance(n, ast.Name) and n.id in records}
    return found


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|") or "–"


def markdown() -> str:
    by_caller, by_rule = callers(), applied_by_rules()
    lines = ["# Op reference", "",
             "Generated from `gradviz.ops.registry` by `make docs` (`python -m gradviz.reference`); do not edit.",
             "Each row is one op record: the node PyTorch records for it, its formula and one vector-Jacobian",
             "product per input, and the public functions and Tensor methods that record it.", ""]
    module = None
    for key, op in registry.ops().items():
        source, _, name = key.rpartition(".")
        if source != module:
            module = source
            lines += ["", f"## `{module if '.' in module else 'gradviz.ops.' + module}`", "",
                      "| record | PyTorch node | formula | VJP per input | recorded by |", "|---|---|---|---|---|"]
        vjps = "; ".join(f"{_cell(name)}: {_cell(f)}" for name, f in zip(op.arg_names, op.vjp_formulas)) \
            if op.vjp is not None else "no gradient"
        by = by_caller.get(key, [])
        if key in by_rule:
            by = by + ["the gradient of another op (create_graph)"]
        lines.append(f"| `{name}` | {op.torch_name} | {_cell(op.formula)} | {vjps} | "
                     f"{', '.join(f'`{b}`' if b.startswith(('gradviz', 'Tensor')) else b for b in by) or '–'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
