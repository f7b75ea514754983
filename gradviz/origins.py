"""Where a recording comes from, decided once for every public entry point (draw, make_dot, animate,
step, the race, the CLI): a Trace recorded before, gradviz tensors (replayed into the Recorder, their
backward run by gradviz's engine) or real torch tensors (the torch bridge, whose Recording steps
torch's own engine). The renderer and the player receive only a Trace or a Recording.
"""
from __future__ import annotations

from ._args import type_name
from .naming import caller_modules, caller_namespace, is_tensor, module_parameters, tensors_named
from .tracing import Trace, build_trace
from .tracing.recording import EngineRecording, Recording, ReplayRecording
from .torch_bridge import record_torch, trace_from_torch


def is_torch(tensor) -> bool:
    """A real PyTorch tensor (checked by module, so torch is never imported to ask)."""
    return type(tensor).__module__.split(".")[0] == "torch"


def is_trace(tensors: tuple) -> bool:
    """One recorded Trace given in place of tensors."""
    return len(tensors) == 1 and isinstance(tensors[0], Trace)


def flat(tensors: tuple) -> tuple:
    """f(a, b) and f([a, b]) alike: the tensors as one tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        return tuple(tensors[0])
    return tuple(tensors)


def check_tensors(tensors: tuple, fn: str | None = None) -> None:
    """Every root is a tensor (gradviz's or torch's): a number, a list of numbers or a model is
    refused by name, before anything is recorded."""
    for i, t in enumerate(tensors):
        if not (hasattr(t, "grad_fn") and hasattr(t, "requires_grad")):
            hint = " (pass its output, or the loss computed from it)" if hasattr(t, "parameters") else ""
            who = f"{fn}() " if fn else ""
            raise TypeError(f"{who}expected tensors (a loss, or the outputs of a graph), but argument {i} is "
                            f"{type_name(t)}{hint}")


def torch_roots(tensors: tuple) -> bool:
    """True for torch tensors, False for gradviz tensors; both at once is refused."""
    kinds = {is_torch(t) for t in tensors}
    if len(kinds) > 1:
        raise TypeError("expected tensors of one library: these are torch tensors and gradviz tensors together "
                        "(a graph runs in one autograd engine)")
    return kinds == {True}


def names_of(names=None, model=None, caller: dict | None = None) -> dict:
    """{name: tensor} for a picture of gradviz tensors: the `names` given ({name: tensor}, or a Module:
    its parameters), then the parameters of `model`, then the tensors the caller's variables hold
    and the parameters of the modules they hold (when no names are given); a tensor keeps the first
    name it is given. A parameter is named as named_parameters() names it, model.2.bias where an
    nn.Sequential's 2.bias would read as arithmetic (naming.parameter_name). (The torch bridge names
    torch tensors from the same three, and clusters them by the modules among them.)"""
    found: dict = {}
    if names is not None:
        found.update(module_parameters(names, caller) if hasattr(names, "named_parameters") else dict(names))
    if model is not None:
        found.update((k, v) for k, v in module_parameters(model, caller).items() if k not in found)
    if names is None:
        found.update((k, v) for k, v in tensors_named(caller or {}, is_tensor).items() if k not in found)
        for module in caller_modules(caller, _is_module):
            found.update((k, v) for k, v in module_parameters(module, caller).items() if k not in found)
    return found


def _is_module(value) -> bool:
    """A gradviz nn.Module (an object with parameters that is not a class or a torch module)."""
    return hasattr(value, "named_parameters") and not isinstance(value, type) and not is_torch(value)


def trace_of(tensors: tuple, names=None, show_saved: bool = False, order_of=None, ctx_saved: bool = False,
             model=None, caller: dict | None = None) -> Trace:
    """The Trace of the graph behind gradviz tensors, or behind real torch tensors (through the torch
    bridge), with no backward run: what a diagram draws. names, model, caller: as in `record`
    (no caller: only the names given)."""
    if tensors and torch_roots(tensors):
        return trace_from_torch(*tensors, params=_given(names, caller), show_saved=show_saved, ctx_saved=ctx_saved,
                                model=model, caller=caller)
    return build_trace(tensors, names_of(names, model, caller), show_saved=show_saved, order_of=order_of,
                       ctx_saved=ctx_saved)


def _given(names, caller: dict | None = None) -> dict | None:
    return None if names is None else names_of(names, caller=caller)


def record(*tensors, gradient=None, names=None, model=None, retain_graph: bool = True, jacobians: bool = False,
           show_saved: bool = False, write_grads: bool = False, caller: dict | None = None,
           unroll: bool = False, eager: bool = False, inputs=None, accumulate: bool = True) -> Recording:
    """The Recording of a backward over `tensors`: its Trace is the graph, complete before any step runs;
    `step()` runs one node, `run()` the rest (then closes: .grad back as it was unless write_grads).

    tensors: gradviz tensors (gradviz's engine, stepped node by node), real torch tensors (torch's engine,
    through `torch_bridge.record_torch`), or one Trace recorded before (its steps handed out again).
    names: {name: tensor} or a Module; by default the caller's variable names. model: a Module whose
    parameter names label the leaves (and, for torch, whose modules cluster the nodes). caller: the
    caller's variables (default: those of the first frame outside gradviz). gradient, retain_graph: as
    in `tensor.backward`. jacobians: each step's local Jacobian. show_saved: what each node saved.
    unroll: torch's fused recurrent node (nn.LSTM on CPU) recorded cell by cell and step by step
    (`torch_bridge.record_torch`); gradviz's own recurrent layers are recorded step by step already.
    eager: torch only, for a view that shows every value of a backward run through (animate): each
    gradient read as torch's hook hands it over; by default when a view first asks for it.
    inputs: as `tensor.backward(inputs=...)`: the pass runs only the nodes that lead to them, and only
    they get a .grad. accumulate=False (with inputs): the pass of `autograd.grad(tensors, inputs)`,
    whose gradients stop at `inputs` without any .grad written.
    """
    if not accumulate and inputs is None:
        raise TypeError("record(accumulate=False) is autograd.grad's pass: it needs inputs")
    if is_trace(tensors):
        return ReplayRecording(tensors[0])
    roots = flat(tensors)
    if not roots:
        raise TypeError("record() needs at least one tensor to run backward from (or a Trace)")
    check_tensors(roots)
    caller = caller_namespace() if caller is None else caller
    if torch_roots(roots):
        return record_torch(roots, gradient=gradient, names=_given(names, caller), model=model, caller=caller,
                            retain_graph=retain_graph, jacobians=jacobians, show_saved=show_saved,
                            write_grads=write_grads, unroll=unroll, eager=eager, inputs=inputs,
                            accumulate=accumulate)
    return EngineRecording(roots, gradient, names_of(names, model, caller), retain_graph=retain_graph,
                           jacobians=jacobians, show_saved=show_saved, write_grads=write_grads, inputs=inputs,
                           accumulate=accumulate)
