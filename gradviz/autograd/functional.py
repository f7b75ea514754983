"""Higher-level autograd: vjp, jacobian, hessian, and gradcheck by central differences."""
from __future__ import annotations

import numpy as np

from .engine import grad


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _prepare(inputs):
    return tuple(t.detach().requires_grad_(True) for t in _as_tuple(inputs))


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
        seed = np.zeros(out.numel(), dtype=out._data.dtype)
        seed[k] = 1
        gs = grad(out, xs, Tensor(seed.reshape(out.shape)), retain_graph=True, create_graph=create_graph,
                  allow_unused=True, materialize_grads=True)
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
    xs = tuple(x for x in _as_tuple(inputs))
    diff = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
    out = func(*xs)
    outs = _as_tuple(out)
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            seed = np.zeros(o.numel(), dtype=o._data.dtype)
            seed[k] = 1
            analytic = grad(o, diff, Tensor(seed.reshape(o.shape)), retain_graph=True, allow_unused=True,
                            materialize_grads=True)
            for x, ga in zip(diff, analytic):
                numeric = _numeric_row(func, xs, x, oi, k, eps)
                if not np.allclose(ga._data.reshape(-1), numeric, atol=atol, rtol=rtol):
                    if raise_exception:
                        raise RuntimeError(
                            f"Jacobian mismatch for output {oi} element {k} with respect to input of shape "
                            f"{list(x.shape)},\nnumerical:{numeric}\nanalytical:{ga._data.reshape(-1)}")
                    return False
    return True


def _numeric_row(func, xs, x, oi, k, eps):
    from .grad_mode import no_grad
    flat = x._data.reshape(-1)
    row = np.zeros(flat.size)
    with no_grad():
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            plus = _as_tuple(func(*xs))[oi]._data.reshape(-1)[k]
            flat[j] = orig - eps
            minus = _as_tuple(func(*xs))[oi]._data.reshape(-1)[k]
            flat[j] = orig
            row[j] = (plus - minus) / (2 * eps)
    return row
