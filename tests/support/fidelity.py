"""Running a program written for `import torch` under PyTorch and under gradviz (only its imports
changed), and comparing what the two print line by line, numbers within float32 tolerance."""
from __future__ import annotations

import contextlib
import importlib
import io
import math
import pathlib
import re
import warnings

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")   # <torch._C.Generator object at 0x...> differs from run to run
# a class prints under its package's name: <class 'gradviz.Tensor'> where torch's is <class 'torch.Tensor'>
PACKAGE = re.compile(r"\bgradviz\.(?=[A-Za-z_])")


def program_names() -> list[str]:
    return sorted(p.stem for p in PROGRAMS.glob("*.py") if p.stem != "__init__")


def source_for(name: str, library: str) -> str:
    """The program's text; for gradviz, `import torch...` / `from torch...` say gradviz instead."""
    text = (PROGRAMS / f"{name}.py").read_text(encoding="utf-8")
    if library == "torch":
        return text
    text = re.sub(r"^(\s*)import torch$", r"\1import gradviz as torch", text, flags=re.M)
    text = re.sub(r"^(\s*)import torch\.(\S+) as", r"\1import gradviz.\2 as", text, flags=re.M)
    return re.sub(r"^(\s*)from torch\b", r"\1from gradviz", text, flags=re.M)


def run(name: str, library: str) -> str:
    """What the program prints (warnings silenced: they go to stderr, which is not compared)."""
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), _backend_flags(library):
        warnings.simplefilter("ignore")
        exec(compile(source_for(name, library), f"<{name}>", "exec"), {"__name__": "__main__"})
    return out.getvalue()


@contextlib.contextmanager
def _backend_flags(library: str):
    """The library's process-wide state a program reads or sets, as in a script of its own, put back after
    it for the tests that follow: its backend flags (nanoGPT's train loop sets allow_tf32) and default
    device (the style transfer tutorial sets one; torch's mode would stay on its stack and attribute
    later warnings to its _device.py), and the hook handles' id counter, which starts at 0 as in a fresh
    process (the pruning tutorial prints a module's hooks, keyed by id, and the tests before it register
    different numbers of hooks in each library). torch's testing package, imported by the OpInfo tests
    in this process, freezes torch's flags, so they are thawed while it runs."""
    lib = importlib.import_module(library)
    backends = importlib.import_module(f"{library}.backends")
    handles = importlib.import_module(f"{library}.utils.hooks").RemovableHandle
    saved = backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32
    next_id, handles.next_id = handles.next_id, 0
    thawed = getattr(backends, "__allow_nonbracketed_mutation", contextlib.nullcontext)
    with thawed():
        try:
            yield
        finally:
            backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32 = saved
            lib.set_default_device(None)
            handles.next_id = max(next_id, handles.next_id)


def differences(ours: str, theirs: str, rtol: float = 1e-4, atol: float = 1e-5, noise: float = 0.0) -> list[str]:
    """The lines that differ in their words, or in a number by more than float32 training drift
    (a dotted name under gradviz reads as the same name under torch).
    noise > 0: numbers below it in size are rounding noise on a value that is mathematically 0,
    printed with its own sign and padding, so the words are compared without spaces and signs."""
    found = []
    a_lines = PACKAGE.sub("torch.", ADDRESS.sub("0x…", ours)).splitlines()
    b_lines = ADDRESS.sub("0x…", theirs).splitlines()
    if len(a_lines) != len(b_lines):
        found.append(f"{len(a_lines)} lines against {len(b_lines)}")
    for k, (a, b) in enumerate(zip(a_lines, b_lines)):
        words_a, words_b = NUMBER.sub("#", a), NUMBER.sub("#", b)
        if noise:
            words_a, words_b = re.sub(r"\s", "", words_a), re.sub(r"\s", "", words_b)
        if words_a != words_b:
            found.append(f"line {k + 1}: {a!r} != {b!r}")
            continue
        for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
            fx, fy = float(x), float(y)
            if abs(fx) < noise and abs(fy) < noise:
                continue
            if not (fx == fy or (math.isnan(fx) and math.isnan(fy)) or abs(fx - fy) <= atol + rtol * abs(fy)):
                found.append(f"line {k + 1}: {x} != {y} in {b!r}")
                break
    return found


def largest_relative_difference(ours: str, theirs: str) -> float:
    """Of the numbers the two print, the largest |a - b| / |b| (words that differ are not counted)."""
    worst = 0.0
    for a, b in zip(ours.splitlines(), theirs.splitlines()):
        if NUMBER.sub("#", a) == NUMBER.sub("#", b):
            for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
                fx, fy = float(x), float(y)
                if fx != fy and math.isfinite(fx) and math.isfinite(fy) and fy != 0:
                    worst = max(worst, abs(fx - fy) / abs(fy))
    return worst
