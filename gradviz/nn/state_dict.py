"""A module's state as torch's Module keeps it: state_dict (each module's _save_to_state_dict, its
extra state, the version of every module in the result's `_metadata`, the state_dict pre- and post-
hooks) and load_state_dict (each module's _load_from_state_dict, which a module may override to read
an older checkpoint, the load pre- and post-hooks, torch's complaints collected and raised at once).
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .parameter import Parameter, is_lazy

EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _hooks(module, table: str) -> list:
    return [hook for hook, _ in module.__dict__.get(table, {}).values()]


def state_dict(module, destination, prefix: str, keep_vars: bool):
    """torch's Module.state_dict: this module's entries (and extra state), then each child's."""
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    local_metadata = dict(version=module._version)
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in _hooks(module, "_state_dict_pre_hooks"):
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
    for hook, flags in module.__dict__.get("_state_dict_hooks", {}).values():
        result = hook(module, destination, prefix, local_metadata)
        if flags.get("public"):
            if result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        elif result is not None:
            destination = result
    return destination


def save_to_state_dict(module, destination, prefix: str, keep_vars: bool) -> None:
    """torch's Module._save_to_state_dict: parameters, persistent buffers, then the extra state."""
    for name, p in module._parameters.items():
        if p is not None:   # an uninitialized one as it is: it cannot be detached
            destination[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
    for name, b in module._buffers.items():
        if b is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()
    if module._overrides("get_extra_state"):
        destination[prefix + EXTRA_STATE_KEY_SUFFIX] = module.get_extra_state()


def load_state_dict(module, state_dict, strict: bool, assign: bool) -> _IncompatibleKeys:
    """Module.load_state_dict: walk the modules as state_dict does, each loading its own entries under
    no_grad, and collect torch's complaints before raising them all at once."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing, unexpected, errors = [], [], []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata

    def load(m, local: dict, prefix: str) -> None:
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        m._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected, errors)
        for name, child in m._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)}, child_prefix)
        keys = _IncompatibleKeys(missing, unexpected)   # a post-hook may change the lists
        for hook in _hooks(m, "_load_state_dict_post_hooks"):
            if hook(m, keys) is not None:
                raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not expected "
                                     "to return new values, if incompatible_keys need to be modified, it should be "
                                     "done inplace.")

    load(module, state_dict, "")
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(module).__name__,
                                                                                "\n\t".join(errors)))
    return _IncompatibleKeys(missing, unexpected)


def load_from_state_dict(m, state_dict, prefix: str, local_metadata: dict, strict: bool, missing: list,
                         unexpected: list, errors: list) -> None:
    """torch's Module._load_from_state_dict: this module's own parameters, persistent buffers and extra
    state from `state_dict` (its load pre-hooks first), and the keys under its prefix it cannot place."""
    for hook, flags in m.__dict__.get("_load_state_dict_pre_hooks", {}).values():
        args = (state_dict, prefix, local_metadata, strict, missing, unexpected, errors)
        hook(m, *args) if flags["with_module"] else hook(*args)
    local = {k: v for k, v in m._parameters.items() if v is not None}
    local.update((k, v) for k, v in m._buffers.items() if v is not None and k not in m._non_persistent_buffers_set)
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local.items():
        key = prefix + name
        if key in state_dict:
            _load_one(m, name, param, key, state_dict[key], assign, errors)
        elif strict:
            missing.append(key)
    extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
    if m._overrides("set_extra_state"):
        if extra_key in state_dict:
            m.set_extra_state(state_dict[extra_key])
        elif strict:
            missing.append(extra_key)
    elif strict and extra_key in state_dict:
        unexpected.append(extra_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                parts = key[len(prefix):].split(".", 1)
                if (parts[0] not in m._modules) if len(parts) > 1 else (parts[0] not in local):
                    unexpected.append(key)


def _load_one(m, name: str, param, key: str, value, assign: bool, errors: list) -> None:
    if not isinstance(value, Tensor):
        errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object '
                      f"from checkpoint but received {type(value)}")
        return
    if param.ndim == 0 and value.ndim == 1:   # torch reads a 0.3-era 1-element vector into a 0-d entry
        value = value[0]
    if tuple(value.shape) != tuple(param.shape):
        errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                      f"the shape in current model is {param.shape}.")
        return
    with no_grad():
        if not assign:
            param.copy_(value)
        elif name in m._parameters:
            setattr(m, name, value.requires_grad_(param.requires_grad) if isinstance(value, Parameter)
                    else Parameter(value, param.requires_grad))
        else:
            m.register_buffer(name, value)
