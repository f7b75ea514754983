"""Running a learner's script as __main__ and catching the backward it really runs.

`run_script(path, catcher)` runs the script as `python script.py` would (its argv, sys.path and
__name__ == "__main__", so `def main()` / `if __name__ == "__main__":` scripts and training loops
run as written, their output going where it always goes). While it runs, `BackwardCatcher`
stands in for every way a backward is started: torch.Tensor.backward, torch.autograd.backward
and torch.autograd.grad, and gradviz's own three. torch's are stood in for the moment torch has
finished importing, whoever imports it (the script, a module of its own it imports, importlib),
through a finder on sys.meta_path (`WhenImported`); a script that never imports torch runs without
it. From then until the Nth backward starts, a TorchFunctionMode (`torch_bridge.lines.LineWatch`)
gives each torch node the script's line that made it, as gradviz's own nodes keep theirs. Calls
before the Nth run as usual; the Nth is recorded (the Trace of its graph and every step), with the
variables of the code that called it naming tensors, parameters and module clusters; then the script
is stopped there (or, with finish=True, the real backward runs too and the script goes on to its
end). When the script ends, sys.meta_path, torch (its functions and its mode stack) and gradviz are
as they were.
"""
from __future__ import annotations

import importlib.abc
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import autograd as gradviz_autograd
from ..code_lines import set_source_tracking, source_tracking
from ..naming import caller_namespace
from ..origins import record
from ..tensor import Tensor as GradvizTensor
from ..torch_bridge.lines import LineWatch
from ..tracing import Trace

class Stopped(BaseException):
    """Raised out of the script once its backward is recorded (a BaseException, so the script's own
    `except Exception:` does not swallow it)."""


@dataclass
class Caught:
    """The recorded backward: its Trace, and where the script started it."""
    trace: Trace
    call: int
    file: str
    line: int
    how: str        # "loss.backward()", "torch.autograd.grad(...)", ...


class BackwardCatcher:
    """Stands in for the functions that start a backward while a script runs; records the Nth call."""

    def __init__(self, call: int = 1, finish: bool = False, **options):
        self.call, self.finish = call, finish
        self.options = options   # for record(): show_saved, jacobians, unroll
        self.count = 0
        self.caught: Caught | None = None
        self.refused: ValueError | None = None   # what record() said of the options (unroll: no fused node)
        self._inside = False   # a backward the catcher itself started, or one started by a caught function
        self._patched: list = []
        self.lines = LineWatch()   # torch's forward until the Nth backward: each node's line of the script

    # -- the stand-ins -------------------------------------------------------------------------------
    def catch(self, original, how: str, roots, how_run: dict, args, kwargs):
        """how_run: the call's gradient and how its pass runs, as record() takes them (a _roots function's)."""
        if self._inside or self.caught is not None and self.finish:
            return self._plainly(original, args, kwargs)
        self.count += 1
        if self.count != self.call:
            return self._plainly(original, args, kwargs)
        self.lines.stop()   # the forward behind this backward is done: the rest of the script runs unwatched
        frame = sys._getframe(1)
        caller = caller_namespace(frame)
        while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            frame = frame.f_back
        self._inside = True
        try:
            trace = record(roots, caller=caller, **how_run, **self.options).run()
        except ValueError as err:   # the options do not fit this graph: said by the command, not the script
            self.refused = err
            raise Stopped from err
        finally:
            self._inside = False
        self.caught = Caught(trace, self.count, frame.f_code.co_filename if frame else "?",
                             frame.f_lineno if frame else 0, how)
        if not self.finish:
            raise Stopped
        return self._plainly(original, args, kwargs)

    def _plainly(self, original, args, kwargs):
        inside, self._inside = self._inside, True
        try:
            return original(*args, **kwargs)
        finally:
            self._inside = inside   # still inside when the catcher's own recording called it

    def _stand_in(self, owner, name: str, how: str, roots_of):
        original = getattr(owner, name)
        catcher = self

        def stand_in(*args, **kwargs):
            roots, how_run = roots_of(*args, **kwargs)
            return catcher.catch(original, how, roots, how_run, args, kwargs)
        stand_in.__name__, stand_in.__doc__ = original.__name__, original.__doc__
        setattr(owner, name, stand_in)
        self._patched.append((owner, name, original))

    def install(self) -> None:
        """Stand in for gradviz's backward functions."""
        self._install(GradvizTensor, gradviz_autograd)

    def install_torch(self, torch) -> None:
        """Stand in for torch's backward functions (torch imported, torch.autograd with it), and watch
        torch's forward for the script's lines."""
        self._install(torch.Tensor, torch.autograd)
        self.lines.start()

    def _install(self, tensor_class, autograd) -> None:
        self._stand_in(tensor_class, "backward", "backward()", _tensor_backward_roots)
        self._stand_in(autograd, "backward", "autograd.backward()", _autograd_backward_roots)
        self._stand_in(autograd, "grad", "autograd.grad()", _autograd_grad_roots)

    def remove(self) -> None:
        self.lines.stop()
        while self._patched:
            owner, name, original = self._patched.pop()
            setattr(owner, name, original)


# each stand-in's arguments, read as the function reads them: what record() needs to run the same pass
def _tensor_backward_roots(self, gradient=None, retain_graph=None, create_graph=False, inputs=None, **kwargs):
    return (self,), {"gradient": gradient, "inputs": inputs}


def _autograd_backward_roots(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
                             inputs=None, **kwargs):
    return tensors, {"gradient": grad_tensors, "inputs": inputs}


def _autograd_grad_roots(outputs, inputs=None, grad_outputs=None, *args, **kwargs):
    """autograd.grad runs the nodes between outputs and inputs and writes no .grad."""
    return outputs, {"gradient": grad_outputs, "inputs": inputs, "accumulate": False}


_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)


class WhenImported(importlib.abc.MetaPathFinder):
    """A finder on sys.meta_path that calls `then(module)` once the module `name` has finished
    importing, whoever imports it and however (`import sys, torch`, a helper module's import,
    importlib.import_module). It finds nothing itself: it asks the finders after it and wraps the
    loader of the spec they find, and the module keeps its own loader."""

    def __init__(self, name: str, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        for finder in sys.meta_path[sys.meta_path.index(self) + 1:] if self in sys.meta_path else ():
            spec = finder.find_spec(fullname, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                if hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenLoader(spec.loader, self)
                return spec
        return None


class _ThenLoader(importlib.abc.Loader):
    """The real loader, then the finder's `then(module)` once the module's code has run to its end
    (unless the finder was taken off sys.meta_path meanwhile: the script is over)."""

    def __init__(self, loader, finder: WhenImported):
        self.loader, self.finder = loader, finder

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self.loader   # the module keeps its own loader
        self.loader.exec_module(module)
        if self.finder in sys.meta_path:
            self.finder.then(module)


def run_script(path: Path, catcher: BackwardCatcher) -> dict:
    """Run the script as __main__ with the catcher standing in; its globals when it ran to its end
    ({} when it was stopped after the caught backward). SyntaxError and the script's own errors
    propagate; SystemExit ends the script as it ends Python."""
    source = path.read_text(encoding="utf-8", errors="replace")
    compile(source, str(path), "exec")   # Python's own SyntaxError, before anything runs
    old_argv, old_path, old_tracking = sys.argv, list(sys.path), source_tracking()
    sys.argv = [str(path)]
    sys.path.insert(0, str(path.parent.resolve()))
    set_source_tracking(True)   # each gradviz node knows the line of the script that made it
    catcher.install()
    watch = WhenImported("torch", catcher.install_torch)
    sys.meta_path.insert(0, watch)
    if "torch" in sys.modules:   # imported before the script ran: stood in for at once
        catcher.install_torch(sys.modules["torch"])
    try:
        return runpy.run_path(str(path), run_name="__main__")
    except Stopped:
        return {}
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise
        return {}
    finally:
        if watch in sys.meta_path:
            sys.meta_path.remove(watch)
        catcher.remove()
        sys.argv, sys.path[:] = old_argv, old_path
        set_source_tracking(old_tracking)
