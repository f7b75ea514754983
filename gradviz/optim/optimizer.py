"""The Optimizer base: parameter groups, per-parameter state, state_dict and zero_grad.

An optimizer's step reads each parameter's .grad, works out every parameter's new array and
state, then writes them into the parameters' memory (bumping their versions, as torch's
in-place step does); no graph is ever recorded.
"""
from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from typing import Any, Callable, Iterable

import numpy as np

from .._args import typename
from ..autograd.grad_mode import enable_grad
from ..ops.core import broadcast_error
from ..tensor import Tensor, zero_grads


class _RequiredParameter:
    """The default of an argument every parameter group must give (SGD's lr in old torch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_SET_MESSAGE = ("optimizer parameters need to be organized in ordered collections, but the ordering of tensors in "
                "sets will change between runs. Please use a list instead.")


class Optimizer:
    """Holds param_groups (dicts of 'params' and hyperparameters) and state[param] (dicts)."""

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {typename(params)}")
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
        return text + ")"

    def add_param_group(self, param_group: dict) -> None:
        """Append a group; missing hyperparameters take the optimizer's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(_SET_MESSAGE)
        else:
            param_group["params"] = list(params)
        names = []
        tensors = []
        for p in param_group["params"]:
            if isinstance(p, tuple) and len(p) == 2:   # model.named_parameters()
                names.append(p[0])
                p = p[1]
            tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + typename(p))
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a .grad; returns closure()'s loss if given.

        Every update is worked out on copies of the parameters and their state, and written only
        once all of them have succeeded: a step that raises (on a bad parameter, hyperparameter or
        state) leaves every parameter and its state as they were."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        copies: dict = {}
        staged = []
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            together = self._stage_together([p for p in params if p._data.size <= SMALL], group)
            if together is None:
                staged += [self._stage(p, group, copies) for p in params]
            else:
                staged += together + [self._stage(p, group, copies) for p in params if p._data.size > SMALL]
        for p, x, state, new in staged:
            p._write(x)
            if new and p not in self.state:   # torch keeps no entry for a parameter with no state (plain SGD)
                self.state[p] = state
            for key, value in new.items():
                old = state.get(key)
                if isinstance(old, Tensor) and isinstance(value, Tensor):
                    old._data = value._data   # the state tensor keeps its identity (state_dict() holds it)
                else:
                    state[key] = value
        return loss

    def _stage(self, p: Tensor, group: dict, copies: dict) -> tuple:
        """p's update on copies: (p, its new array, its state, its new state); nothing of p's is written.
        A parameter listed twice is updated twice, the second time from its first update's copies."""
        g = p._grad._data
        if group.get("maximize"):
            g = -g
        if id(p) not in copies:
            state = self.state.get(p, {})   # not self.state[p]: a parameter that keeps no state gets no entry
            _check_state(p, state)
            copies[id(p)] = (p._data.copy(), {key: Tensor._make(value._data.copy()) if isinstance(value, Tensor)
                                              else value for key, value in state.items()}, state)
        x, new, state = copies[id(p)]
        self._update(p, x, g, new, group)
        return p, x, state, new

    def _stage_together(self, params: list, group: dict) -> list | None:
        """The group's updates as _stage gives them, worked out on one flat array when the rule is
        elementwise and registered in ELEMENTWISE (Adam, AdamW): each arithmetic step runs once for the
        group instead of once per parameter, on the same numbers (each element meets the same scalars).
        None where the parameters cannot share one array: another dtype or device, state of another
        shape, dtype or step count."""
        if getattr(self._update, "__func__", None) not in ELEMENTWISE or len(params) < 2:
            return None
        dtype = params[0]._data.dtype
        if len({id(p) for p in params}) < len(params) or any(
                type(p._data) is not np.ndarray or type(p._grad._data) is not np.ndarray or p._data.dtype != dtype
                or p._grad._data.dtype != dtype for p in params):
            return None
        states = [self.state.get(p, {}) for p in params]
        if not _shared_state(params, states):
            return None
        sizes = [p._data.size for p in params]
        x = np.concatenate([p._data.reshape(-1) for p in params])
        g = np.concatenate([p._grad._data.reshape(-1) for p in params])
        if group.get("maximize"):
            g = -g
        new = {key: Tensor._make(value._data.copy() if key in OWN_SHAPE_STATE else
                                 np.concatenate([state[key]._data.reshape(-1) for state in states]))
               for key, value in states[0].items()}
        self._update(Tensor._make(x), x, g, new, group)
        flat = [(key, key in OWN_SHAPE_STATE, value._data) for key, value in new.items()]
        make, staged, start = Tensor._make, [], 0
        for p, state, size in zip(params, states, sizes):
            shape, end = p._data.shape, start + size
            mine = {key: make(data.copy() if own else data[start:end].reshape(shape)) for key, own, data in flat}
            staged.append((p, x[start:end].reshape(shape), state, mine))
            start = end
        return staged

    def _update(self, p: Tensor, x, g, state: dict, group: dict) -> None:
        """Rewrite the array x (p's data) in place from its gradient g (already negated for maximize)."""
        raise NotImplementedError

    # -- saving and restoring -------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """{'state': {index: state}, 'param_groups': [group with params as indices]}, as torch numbers them."""
        index: dict = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = copy.deepcopy(state_dict)
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        by_index = {i: p for g, s in zip(groups, saved_groups) for i, p in zip(s["params"], g["params"])}
        state: defaultdict = defaultdict(dict)
        for i, values in state_dict["state"].items():
            if i not in by_index:
                continue
            p = by_index[i]
            state[p] = {k: _cast_state(k, v, p) for k, v in values.items()}
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved = dict(saved)
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups


# state not of its parameter's shape: one number per parameter (the step count, NAdam's product of
# momenta, ASGD's eta and mu) and Adafactor's factored variances (one per row, one per column)
OWN_SHAPE_STATE = frozenset({"step", "mu_product", "eta", "mu", "row_var", "col_var"})


# the _update rules that treat every element alike, registered by algorithms.py where it pays: a group's
# parameters of at most SMALL elements are then updated as one flat array (on larger ones a NumPy call's
# own cost is small beside its arithmetic, and the copies into one array would cost more)
SMALL = 4096
ELEMENTWISE: set = set()


def _shared_state(params: list, states: list) -> bool:
    """Whether the parameters' states can be stacked: the same keys, every buffer a NumPy array of its
    parameter's shape and dtype, and the same per-parameter numbers (the step count) everywhere."""
    keys = list(states[0])
    own = {key: value._data for key, value in states[0].items() if key in OWN_SHAPE_STATE
           and isinstance(value, Tensor) and isinstance(value._data, (np.ndarray, np.generic))}
    own_bytes = {key: first.tobytes() for key, first in own.items()}   # what every parameter's must equal
    for p, state in zip(params, states):
        if list(state) != keys:
            return False
        x = p._data
        for key, value in state.items():
            if type(value) is not Tensor and not isinstance(value, Tensor):
                return False
            data = value._data
            if type(data) is not np.ndarray and not isinstance(data, (np.ndarray, np.generic)):
                return False   # (the step count is a NumPy scalar once counted)
            first = own.get(key)
            if first is not None:
                if data.dtype != first.dtype or data.shape != first.shape or data.tobytes() != own_bytes[key]:
                    return False
            elif key in OWN_SHAPE_STATE or data.shape != x.shape or data.dtype != x.dtype:
                return False
    return True


def _check_state(p: Tensor, state: dict) -> None:
    """A state buffer must have its parameter's shape; PyTorch's words for the in-place op that meets it."""
    for key, value in state.items():
        if key in OWN_SHAPE_STATE or not isinstance(value, Tensor) or value.shape == p.shape:
            continue
        shape, full = tuple(value.shape), tuple(p.shape)
        message = broadcast_error(shape, full)
        if message is None:
            full = tuple(np.broadcast_shapes(shape, full))
            message = (f"output with shape {list(p.shape if shape == full else shape)} doesn't match the broadcast "
                       f"shape {list(full)}")
        raise RuntimeError(message)


def _cast_state(key: str, value, param: Tensor):
    """Loaded state follows its parameter's dtype and device (torch keeps 'step' as it was)."""
    if isinstance(value, Tensor) and key != "step" and value.is_floating_point():
        return value.to(dtype=param.dtype, device=param.device)
    return value


def state_tensor(p: Tensor, fill: float = 0.0) -> Tensor:
    """A buffer of p's shape and dtype filled with `fill` (torch.full_like(p, fill))."""
    data = p._data.copy()
    data[...] = fill
    return Tensor._make(data)


def step_count(state: dict) -> float:
    """Advance state['step'] (a scalar tensor, as torch keeps it) and return its value."""
    step = state["step"]
    step._data = step._data + 1
    return float(step._data)
