"""Higher-level autograd: vjp, jacobian, hessian, and gradcheck by central differences."""
from __future__ import annotations

import numpy as np

from .engine import grad


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _prepare(inputs):
    return tuple(t.detach().requires_grad_(True) for t in _as_tuple(inputs))


def _one_hot(out, k: int):
    """A seed of out's shape and dtype: 1 at flat index k, 0 elsewhere (picks out row k of the Jacobian)."""
    from ..tensor import Tensor
    seed = np.zeros(out.numel(), dtype=out._data.dtype)
    seed[k] = 1
    return Tensor(seed.reshape(out.shape))


def vjp(func, inputs, v=None, create_graph=False):
    """(func(inputs), vᵀ J): one backward pass with `v` as the seed."""
    from ..tensor import Tensor
    single = isinstance(inputs, Tensor)
    xs = _prepare(inputs)
    out = func(*xs)
    grads = grad(out, xs, v, create_graph=create_graph, allow_unused=True, materialize_grads=True)
    out = out if create_graph else out.detach()
    return out, (grads[0] if single else grads)


def jacobian(func, inputs, create_graph=False):
    """The full Jacobian, one backward pass per output element (a one-hot seed each time)."""
    from ..tensor import Tensor
    single = isinstance(inputs, Tensor)
    xs = _prepare(inputs)
    out = func(*xs)
    rows = [[] for _ in xs]
    for k in range(out.numel()):
        gs = grad(out, xs, _one_hot(out, k), retain_graph=True, create_graph=create_graph, allow_unused=True,
                  materialize_grads=True)
        for i, g in enumerate(gs):
            rows[i].append(g._data)
    jac = tuple(Tensor._make(np.stack(r).reshape(tuple(out.shape) + tuple(x.shape))) for r, x in zip(rows, xs))
    return jac[0] if single else jac


def hessian(func, inputs):
    """Jacobian of the gradient (create_graph=True under the hood)."""
    from ..tensor import Tensor
    single = isinstance(inputs, Tensor)

    def gradient(*xs):
        (g,) = grad(func(*xs), xs[0], create_graph=True)
        return g
    if not single:
        raise NotImplementedError("hessian of several inputs: call it once per input")
    return jacobian(gradient, inputs)


def gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) -> bool:
    """Compare the engine's vector-Jacobian products with central finite differences.

    Like torch.autograd.gradcheck, inputs should be float64 tensors with requires_grad=True."""
    from ..tensor import Tensor
    xs = _as_tuple(inputs)
    diff = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
    out = func(*xs)
    outs = _as_tuple(out)
    numeric_of = {}   # id(x) -> numerical Jacobian of every output w.r.t. x, computed once
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            analytic = grad(o, diff, _one_hot(o, k), retain_graph=True, allow_unused=True, materialize_grads=True)
            for x, ga in zip(diff, analytic):
                if id(x) not in numeric_of:
                    numeric_of[id(x)] = _numeric_jacobian(func, xs, x, eps)
                numeric = numeric_of[id(x)][oi][k]
                if not np.allclose(ga._data.reshape(-1), numeric, atol=atol, rtol=rtol):
                    if raise_exception:
                        raise RuntimeError(
                            f"Jacobian mismatch for output {oi} element {k} with respect to input of shape "
                            f"{list(x.shape)},\nnumerical:{numeric}\nanalytical:{ga._data.reshape(-1)}")
                    return False
    return True


def _numeric_jacobian(func, xs, x, eps):
    """Per output, the matrix d out[k] / d x[j] by central differences: 2 evaluations per
    element of x. Elements are visited by index, so a non-contiguous x is perturbed in place."""
    from .grad_mode import no_grad
    data = x._data
    with no_grad():
        sizes = [o.numel() for o in _as_tuple(func(*xs))]
        jacobians = [np.zeros((n, data.size)) for n in sizes]
        for j, idx in enumerate(np.ndindex(data.shape)):
            orig = data[idx]
            data[idx] = orig + eps   # np.array copies: an output may be a view of x
            plus = [np.array(o._data, dtype=np.float64).reshape(-1) for o in _as_tuple(func(*xs))]
            data[idx] = orig - eps
            minus = [np.array(o._data, dtype=np.float64).reshape(-1) for o in _as_tuple(func(*xs))]
            data[idx] = orig
            for jac, p, m in zip(jacobians, plus, minus):
                jac[:, j] = (p - m) / (2 * eps)
    return jacobians


def gradgradcheck(func, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True) -> bool:
    """Check second derivatives: gradcheck of the map (inputs, ḡ) -> VJP(inputs, ḡ), which
    is differentiable only when every backward on the way records its own graph."""
    from ..creation import randn_like
    from ..tensor import Tensor
    from .grad_mode import enable_grad
    xs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = [o for o in _as_tuple(func(*xs)) if isinstance(o, Tensor) and o.requires_grad]
        grad_outputs = tuple(randn_like(o).requires_grad_() for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_grads = len(grad_outputs)

    def vjp_of(*args):
        with enable_grad():   # the finite differences run under no_grad; the VJP needs its graph
            args_in, seeds = args[:-n_grads], args[-n_grads:]
            outs = [o for o in _as_tuple(func(*args_in)) if isinstance(o, Tensor) and o.requires_grad]
            diff = [x for x in args_in if isinstance(x, Tensor) and x.requires_grad]
            grads = grad(outs, diff, seeds, create_graph=True, allow_unused=True)
            return tuple(g for g in grads if g is not None)
    return gradcheck(vjp_of, xs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
