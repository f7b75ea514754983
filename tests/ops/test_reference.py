"""docs/ops.md, the op reference, is what the registry and the functions say today, and it leaves
no differentiable record unexplained: each is recorded by a public function or Tensor method, or by
the gradient of another op (create_graph=True)."""
import pathlib

from gradviz import reference
from gradviz.ops import registry

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def test_the_reference_is_current():
    assert DOC.read_text(encoding="utf-8") == reference.markdown(), "run `make docs` to regenerate docs/ops.md"


def test_every_differentiable_record_is_recorded_by_something():
    by_caller, by_rule = reference.callers(), reference.applied_by_rules()
    orphans = [key for key, op in registry.ops().items()
               if op.vjp is not None and key not in by_caller and key not in by_rule]
    assert not orphans, orphans


def test_the_reference_names_torchs_nodes_and_the_functions_that_record_them():
    text = reference.markdown()
    rows = {line.split("|")[1].strip(" `"): line for line in text.splitlines() if line.startswith("| `")}
    assert "| MmBackward0 | C = A B | self: ḡ Bᵀ; mat2: Aᵀ ḡ |" in rows["MM"]
    for name in ("`gradviz.mm`", "`Tensor.mm`", "`gradviz.matmul`", "`gradviz.nn.functional.linear`"):
        assert name in rows["MM"]
    assert "`gradviz.conv2d`" in rows["CONVOLUTION"]   # torch.conv2d, also nn.functional.conv2d
    assert "`gradviz.linalg.multi_dot`" in rows["MM"]
    assert "the gradient of another op" in rows["TANH_BACKWARD"]
    assert text.count("\n## `gradviz.ops.") == len({key.split(".")[0] for key in registry.ops()})


def test_every_record_lives_in_ops():
    """The functions only run records: a record bound in gradviz.functions would be missing from the
    registry (and so from the torch bridge and this reference)."""
    import importlib
    import pkgutil

    import gradviz.functions
    from gradviz.ops.op import Op
    known = {id(op) for op in registry.ops().values()}
    stray = [f"{info.name}.{name}" for info in pkgutil.iter_modules(gradviz.functions.__path__)
             for name, value in vars(importlib.import_module(f"gradviz.functions.{info.name}")).items()
             if isinstance(value, Op) and id(value) not in known]
    assert not stray, stray
