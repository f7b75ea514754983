"""torch.func: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call.

The transforms run on the one engine. Reverse transforms (grad, vjp, jacrev) call
autograd.grad with create_graph=True, so a transform's result can itself be transformed
(grad(grad(f)), jacrev(jacrev(f))). Forward transforms (jvp, jacfwd) use forward mode
(autograd.forward_ad), one tangent per pass; inside an open forward level (forward mode
does not nest) they use the double-backward trick instead. hessian is jacfwd(jacrev(f)),
forward over reverse, as in torch. At the outermost transform, results are detached
unless an input requires grad, so a plain call returns plain tensors as torch's does.

vmap is a loop: func runs once per index of the mapped dimension on x.select(dim, i),
and the results are stacked along out_dims. The values are those of a batched
evaluation; the graph (when one is recorded) shows the loop, SelectBackward0 and
StackBackward0 included.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable

from .autograd import forward_ad
from .autograd.engine import grad as _grad
from .autograd.functional import _forward, _one_hot, _stack_rows, track
from .autograd.grad_mode import enable_grad
from .creation import zeros_like
from .functions.shape import stack
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call"]

_depth = [0]   # how many transforms are running, so only the outermost detaches its results


def _Tensor():
    return Tensor


# -- pytrees: tensors in nested tuples, lists and dicts --------------------------------------------
def _flatten(tree) -> tuple[list, Callable]:
    """(leaves, rebuild): rebuild(new_leaves) puts new leaves back in the same structure."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        leaves = [leaf for p in parts for leaf in p[0]]
        sizes = [len(p[0]) for p in parts]

        def rebuild(new, kind=type(tree)):
            out, i = [], 0
            for (_, fn), n in zip(parts, sizes):
                out.append(fn(new[i:i + n]))
                i += n
            # a namedtuple takes its fields; tuple, list and torch.return_types-like tuples one sequence
            made = kind(*out) if hasattr(kind, "_fields") else kind(out)
            if getattr(tree, "__dict__", None):   # what such a tuple carries besides its items (its _name)
                made.__dict__.update(tree.__dict__)
            return made
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves_fn = _flatten([tree[k] for k in keys])
        return leaves_fn[0], lambda new: dict(zip(keys, leaves_fn[1](new)))
    return [tree], lambda new: new[0]


def _map(fn, tree):
    leaves, rebuild = _flatten(tree)
    return rebuild([fn(leaf) for leaf in leaves])


# -- helpers ---------------------------------------------------------------------------------
def _track(x):
    return track(x) if isinstance(x, _Tensor()) else x


@contextlib.contextmanager
def _transform(args):
    """Counts nesting; yields a function that finishes a result for the caller."""
    _depth[0] += 1
    outermost = _depth[0] == 1
    keep = any(isinstance(a, _Tensor()) and a.requires_grad for a in _flatten(list(args))[0]) or \
        forward_ad._state.level is not None
    try:
        with enable_grad():
            yield (lambda tree: tree) if keep or not outermost else (
                lambda tree: _map(lambda t: t.detach() if isinstance(t, _Tensor()) else t, tree))
    finally:
        _depth[0] -= 1


def _argnums_tuple(argnums, nargs: int) -> tuple:
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for n in nums:
        if not isinstance(n, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnum={n}, but only {nargs} positional inputs")
    return tuple(n % nargs for n in nums)


def _split_aux(out, has_aux: bool, api: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}(f, ...)(*args): output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


def _grads(outputs: list, cotangents: list, inputs: list) -> list:
    """d⟨outputs, cotangents⟩/d inputs with create_graph (zeros for unused inputs)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs or not inputs:
        return [zeros_like(x) for x in inputs]
    found = _grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=True, create_graph=True,
                  allow_unused=True)
    return [g if g is not None else zeros_like(x) for g, x in zip(found, inputs)]


# -- reverse mode ---------------------------------------------------------------------------
def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """(∇f, f) at the arguments in argnums; f must return a scalar Tensor."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args))
        with _transform(args) as finish:
            args = list(args)
            tracked = {n: _map(_track, args[n]) for n in nums}
            for n in nums:
                args[n] = tracked[n]
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(output, _Tensor()):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.ndim != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            leaves = [(n, _flatten(tracked[n])) for n in nums]
            flat = [x for _, (xs, _) in leaves for x in xs]
            gs = _grads([output], [None], flat)
            out, i = [], 0
            for n, (xs, rebuild) in leaves:
                out.append(rebuild(gs[i:i + len(xs)]))
                i += len(xs)
            g = tuple(out) if isinstance(argnums, tuple) else out[0]
            if has_aux:
                return finish((g, (output, aux)))
            return finish((g, output))
    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """∇f at the arguments in argnums (with has_aux: (∇f, aux))."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func: Callable, *primals, has_aux: bool = False):
    """(f(primals), vjp_fn[, aux]); vjp_fn(cotangents) returns one gradient per primal."""
    with _transform(primals) as finish:
        tracked = [_map(_track, p) for p in primals]
        output, aux = _split_aux(func(*tracked), has_aux, "vjp")
        out_leaves, _ = _flatten(output)
        flat_in = [x for p in tracked for x in _flatten(p)[0]]
        structure = [_flatten(p)[1] for p in tracked]
        sizes = [len(_flatten(p)[0]) for p in tracked]

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        cots, _ = _flatten(cotangents)
        if len(cots) != len(out_leaves):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {len(cots)} leaves, primal output: "
                               f"{len(out_leaves)} leaves")
        with _transform((cotangents,) + tuple(primals)) as finish_grads:
            gs = _grads(out_leaves, cots, flat_in)
            result, i = [], 0
            for rebuild, n in zip(structure, sizes):
                result.append(rebuild(gs[i:i + n]))
                i += n
            return finish_grads(tuple(result))

    output = finish(output)
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size=None) -> Callable:
    """The Jacobian by reverse mode: one backward pass per output element.
    Each block has shape output.shape + input.shape."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args))
        with _transform(args) as finish:
            args = list(args)
            for n in nums:
                args[n] = _track(args[n])
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "jacrev")
            ins = [args[n] for n in nums]

            def block(out):
                rows = [_grads([out], [_one_hot(out, k)], ins) for k in range(out.numel())]
                per_input = tuple(_stack_rows([r[j] for r in rows], tuple(out.shape), tuple(x.shape), True)
                                  for j, x in enumerate(ins))
                return per_input if isinstance(argnums, tuple) else per_input[0]
            jac = _map(block, output)
            return finish((jac, aux) if has_aux else jac)
    return wrapper


# -- forward mode ---------------------------------------------------------------------------
def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(f(primals), J·tangents[, aux]) by forward mode."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {len(primals)} and tangents with structure {len(tangents)}")
    p_leaves, p_rebuild = _flatten(list(primals))
    t_leaves, _ = _flatten(list(tangents))
    for p, t in zip(p_leaves, t_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same shape. "
                               f"Got primal shape {list(p.shape)} and tangent shape {list(t.shape)}")
    with _transform(primals + tangents) as finish:
        holder = {}

        def flat_func(*leaves):
            out, aux = _split_aux(func(*p_rebuild(list(leaves))), has_aux, "jvp")
            holder["aux"], (holder["leaves"], holder["rebuild"]) = aux, _flatten(out)
            return tuple(holder["leaves"])

        outs, _, tans = _forward(flat_func, tuple(p_leaves), tuple(t_leaves))
        rebuild = holder["rebuild"]
        result = (rebuild(list(outs)), rebuild(list(tans)))
        if has_aux:
            result = result + (_map(lambda a: forward_ad.unpack_dual(a).primal
                                    if isinstance(a, _Tensor()) else a, holder["aux"]),)
        return finish(result)


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """The Jacobian by forward mode: one tangent (a basis vector) per input element."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args))
        with _transform(args) as finish:
            holder = {}

            def flat_func(*ins):
                full = list(args)
                for n, x in zip(nums, ins):
                    full[n] = x
                out, aux = _split_aux(func(*full, **kwargs), has_aux, "jacfwd")
                holder["aux"], (holder["leaves"], holder["rebuild"]) = aux, _flatten(out)
                return tuple(holder["leaves"])

            ins = tuple(args[n] for n in nums)
            columns = []   # per input: per output, the tangents for each basis vector
            for j, x in enumerate(ins):
                per_out = None
                for k in range(x.numel()):
                    outs, _, tans = _forward(flat_func, ins, tuple(_one_hot(x, k) if jj == j else None
                                                                   for jj in range(len(ins))))
                    per_out = per_out or [[] for _ in tans]
                    for i, t in enumerate(tans):
                        per_out[i].append(t)
                columns.append(per_out)
            if "leaves" not in holder:   # every input is empty: run once to learn the outputs
                flat_func(*ins)
            outs = holder["leaves"]
            blocks = []
            for i, out in enumerate(outs):
                per_input = tuple(_stack_rows(columns[j][i] if columns[j] else [], tuple(out.shape), tuple(x.shape),
                                              True, columns=True) for j, x in enumerate(ins))
                blocks.append(per_input if isinstance(argnums, tuple) else per_input[0])
            jac = holder["rebuild"](blocks)
            if has_aux:
                return finish((jac, holder["aux"]))
            return finish(jac)
    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """jacfwd(jacrev(f)): forward over reverse, as torch.func.hessian."""
    return jacfwd(jacrev(func, argnums), argnums)


# -- batching -------------------------------------------------------------------------------
def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None) -> Callable:
    """func mapped over a dimension of its inputs (a loop over that dimension, results stacked)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
                             f"the structure of `inputs`. in_dims has structure {len(dims)} but inputs has structure "
                             f"{len(args)}.")
        mapped = []   # (arg index, leaf index, dim)
        flat_args = []
        for a, d in zip(args, dims):
            leaves, rebuild = _flatten(a)
            flat_args.append((leaves, rebuild))
        sizes = []
        for ai, ((leaves, _), d) in enumerate(zip(flat_args, dims)):
            for li, leaf in enumerate(leaves):
                if d is None or not isinstance(leaf, _Tensor()):
                    continue
                if not -leaf.ndim <= d < leaf.ndim:
                    raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                                     f"input but the input is of type {type(leaf)}. We cannot vmap over non-Tensor "
                                     "arguments, please use None as the respective in_dim" if not leaf.ndim else
                                     f"vmap: Got in_dim={d} for some input, but that input is a Tensor of "
                                     f"dimensionality {leaf.ndim} so expected in_dim to satisfy "
                                     f"-{leaf.ndim} <= in_dim < {leaf.ndim}.")
                mapped.append((ai, li, d % leaf.ndim))
                sizes.append(leaf.shape[d])
        if not mapped:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a "
                             "Tensor that is mapped over (an in_dim that is not None)")
        if len(set(sizes)) != 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        results = []
        for i in range(sizes[0]):
            call = [list(leaves) for leaves, _ in flat_args]
            for ai, li, d in mapped:
                call[ai][li] = call[ai][li].select(d, i)
            results.append(func(*[rebuild(c) for c, (_, rebuild) in zip(call, flat_args)], **kwargs))
        first_leaves, rebuild = _flatten(results[0])
        per_result = [_flatten(r)[0] for r in results]
        odims = out_dims if isinstance(out_dims, tuple) and len(first_leaves) > 1 else (out_dims,) * len(first_leaves)
        out = []
        for k, od in enumerate(odims):
            column = [leaves[k] for leaves in per_result]
            if od is None:
                out.append(column[0])
                continue
            for c in column:
                if not isinstance(c, _Tensor()):
                    raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                                     f"{type(c)}. Did you mean to set out_dims= to None for output?")
            out.append(stack(column, od))
        return rebuild(out)
    return wrapper


def _name(fn) -> str:
    return getattr(fn, "__name__", repr(fn))


# -- modules as functions -------------------------------------------------------------------
def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """module(*args, **kwargs) with some parameters and buffers replaced by the given tensors
    (the module's own are put back afterwards, even on error)."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (tuple, list)):
        merged: dict = {}
        for d in dicts:
            for k in d:
                if k in merged:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is ambiguous")
            merged.update(d)
        dicts = merged
    if strict:
        names = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing = sorted(names - set(dicts))
        unexpected = sorted(set(dicts) - names)
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(parts))
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    saved = []
    try:
        for name, value in dicts.items():
            owner, attr = _owner(module, name)
            saved.append((owner, attr, _swap(owner, attr, value)))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, attr, old in reversed(saved):
            _swap(owner, attr, old)


def _owner(module, name: str):
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def _swap(owner, attr: str, value) -> Any:
    """Put `value` where owner.attr is read (its parameter/buffer table and the attribute); return the old one."""
    old = getattr(owner, attr)
    for table in ("_parameters", "_buffers"):
        entries = owner.__dict__.get(table)
        if entries is not None and attr in entries:
            entries[attr] = value
    if attr in owner.__dict__:
        object.__setattr__(owner, attr, value)
    return old
