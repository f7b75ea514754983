"""swap_in_optimizer_params_and_state: run an optimizer, for the length of a `with` block, on other
parameters and an optimizer.state_dict()-shaped state, then put its own back (torch.optim's).

The checks and their words are torch's, made before anything is swapped; on leaving the block
every live group dict is restored to what it held and the live state put back."""
from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any

from ..tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


def _fail(message: str):
    raise RuntimeError(message)


def _check_state(state) -> dict:
    """The swapped-in 'state': a dict from packed parameter ids to per-parameter dicts."""
    if not isinstance(state, dict):
        _fail(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids to "
              f"per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        _fail(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        _fail(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_group(idx: int, group: dict, swapin_group) -> list:
    """One swapped-in param group against its live one; returns its packed parameter ids."""
    if not isinstance(swapin_group, dict):
        _fail(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        _fail(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed by packed "
              "parameter ids.")
    if len(group["params"]) != len(ids):
        _fail(f"swapin_optim_state param group {idx} has a different number of params than the live optimizer "
              "param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        _fail(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the live optimizer "
              f"group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys only in live: {live_only}.")
    return ids


def _prepare(optimizer, parameters: dict, optim_state) -> tuple[dict, list]:
    """Check everything first; returns the packed state and, per group, (live group, swap-in group, tensors)."""
    if not optimizer.state:
        _fail(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        _fail(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(optim_state.get("state"))
    groups = optim_state.get("param_groups")
    if not isinstance(groups, list):
        _fail(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, got "
              f"{type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        _fail("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    flat = list(parameters.values())   # matched to the groups by order, as packed ids are
    offset, seen, plan = 0, set(), []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            _fail(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups ordering.")
        plan.append((group, swapin_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        _fail(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids from "
              f"param_groups[*]['params']; got extra keys {extra!r}.")
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]):
    """Within the block, `optimizer` steps `swapin_parameters` (in its parameters' order) with the state
    of `swapin_optim_state` (an optimizer.state_dict()); its own parameters, hyperparameters and state
    come back on exit. Only updates of the given state's tensors reach the caller's dict (each
    per-parameter dict is copied, its tensors are not)."""
    state, plan = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]   # shallow: the params list keeps its identity
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, swapin_group, tensors in plan:
            live["params"] = tensors
            live.update((k, v) for k, v in swapin_group.items() if k != "params")
            for p, pid in zip(tensors, swapin_group["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state


swap_in_optimizer_params_and_state.__module__ = "gradviz.optim"
