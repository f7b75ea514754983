"""No function of the package is over 100 lines: a longer one is split into named steps."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "gradviz"
MAX_LINES = 100


def long_functions() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    found.append(f"{path.relative_to(ROOT.parent)}: {node.name} ({lines} lines)")
    return found


def test_no_function_is_over_100_lines():
    assert not long_functions(), "split into named helpers:\n" + "\n".join(long_functions())
