"""The Python numbers a learner's call gave an op that its torch node does not keep.

torch wraps the 1 of `x + 1` (the eps of `var + 1e-5`, the 0. of `torch.where(m, x, 0.)`) in a
tensor that needs no gradient, and AddBackward0 saves only alpha: the finished graph no longer
knows the number, and a label could only show a symbol for it. So while a forward is watched
(`record_forward`, and `gradviz render|animate` on a torch script), each call that made exactly one
node keeps the numbers among its arguments in the node's own `metadata`, beside the line that made
it (lines.py); `given` later hands each of them to the input or parameter it stands for.
"""
from __future__ import annotations

from functools import lru_cache
from numbers import Number

from .support import sequence_nr, torch_module

KEY = "gradviz_numbers"   # node.metadata[KEY] = (the positional numbers, {keyword: number}) of its call


def keep(result, start: int, args: tuple, kwargs: dict | None, made: int) -> None:
    """After a call that returned `result`: where it made exactly one node (`start` its sequence
    number, `made` the next one's), keep the plain numbers among its arguments in that node."""
    if made != start + 1 or not isinstance(result, torch_module().Tensor):   # (asking anything else for a grad_fn
        return                                                                 # can cost 50 µs)
    fn = result.grad_fn
    if fn is None or sequence_nr(fn) != start:
        return
    positional = tuple((i, a) for i, a in enumerate(args) if isinstance(a, Number))
    named = {k: v for k, v in (kwargs or {}).items() if isinstance(v, Number)}
    if positional or named:
        fn.metadata[KEY] = positional, named


def given(fn, op, saved) -> dict:
    """name -> number for each input and parameter of `op` (the node's gradviz record) that the node
    saved nothing for (`saved(name)`: the value it saved, else None) and that the call making it gave
    as a number: by keyword, or by position as torch's schemas for the op name that position. A
    tensor argument that needs no gradient, which the node did not keep either, stays unknown."""
    call = fn.metadata.get(KEY)
    if call is None:
        return {}
    positional, named = call
    edges = fn.next_functions
    inputs = [name for slot, name in enumerate(op.arg_names) if slot < len(edges) and edges[slot][0] is None]
    missing = {name for name in (*inputs, *op.param_names) if saved(name) is None}
    found = {name: named[key] for name in missing
             for key in ((name, "input") if name == "self" else (name,)) if key in named}   # input=: the record's self
    names = _positions(op.name)
    for i, value in positional:
        name = names.get(i)
        if name in missing and name not in found:
            found[name] = value
    return found


@lru_cache(maxsize=None)
def _positions(op_name: str) -> dict:
    """position -> argument name, where every one of torch's schemas for aten::<op_name> that takes a
    `self` names that position alike and types it as one value (a Scalar or a Tensor, not a list):
    where(condition, self, other), add(self, other, alpha), masked_fill(self, mask, value)."""
    torch = torch_module()
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{op_name}")
    except RuntimeError:
        return {}
    names: dict = {}
    for schema in schemas:
        args = [a for a in schema.arguments if not a.kwarg_only]
        if not any(a.name == "self" for a in args):   # add(int a, int b) and its kin: TorchScript's, not tensors'
            continue
        for i, a in enumerate(args):
            names.setdefault(i, set()).add(None if "[" in str(a.type) else a.name)
    return {i: n.pop() for i, n in names.items() if len(n) == 1 and None not in n}
