"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp; and gradcheck by central differences.

Reverse-mode products run the engine with a seed; jvp, hvp and the forward-mode
jacobian run real forward mode (autograd.forward_ad), one tangent per pass. vectorize=True
is accepted and computes the same values by the same loop (one pass per basis vector).
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import backend
from ..creation import empty, ones_like, rand, randn_like, zeros, zeros_like
from ..dtypes import float64
from ..random import Generator
from ..tensor import Tensor
from . import forward_ad
from .engine import grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

_STRATEGIES = ("forward-mode", "reverse-mode")


def _as_tuple(inp, arg_name=None, fn_name=None):
    """(was it a tuple, the tuple), with torch's TypeError for anything but Tensors."""
    if arg_name is None:
        return isinstance(inp, tuple), inp if isinstance(inp, tuple) else (inp,)
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f" value at index {i} has type {type(el)}." if is_tuple else \
                f" given {arg_name} has type {type(el)}."
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the{where}")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Unwrap the tuple levels the user did not ask for (a Tensor in, a Tensor out)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(r[0] for r in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh handles on the inputs: detached leaves, or (create_graph) views still in the graph."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _grad_postprocess(inputs, create_graph: bool):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(t.detach() for t in inputs)
    return tuple(_grad_postprocess(t, create_graph) for t in inputs)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(inputs, input_type: str, strict: bool) -> None:
    """strict=True: torch's errors for an output (or a derivative) independent of an input."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict mode. You should ensure "
                                   "that your function is thrice differentiable and that the hessian depends on the "
                                   "inputs.")
            if input_type == "jacobian":
                raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided "
                                   f"function with respect to input {i} is independent of the input. This is not "
                                   "allowed in strict mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the inputs (this would be "
                                   "violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None) -> tuple:
    """grad() that skips outputs needing no grad and returns None for unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                create_graph=create_graph, allow_unused=True)


_STAGE_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_MESSAGES[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _outputs_of(func, inputs, fn_name: str, strict: bool):
    outputs = func(*inputs)
    is_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_tuple, outputs


def _prepare_v(v, refs, is_refs_tuple: bool, create_graph: bool, fn_name: str, what: str):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, refs, is_refs_tuple)
        return v
    if len(refs) != 1 or refs[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor with a single element.")
    return None


# -- products --------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), vᵀ J): one backward pass with `v` as the seed."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, "vjp", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       "user-provided function returns")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def _forward(func, inputs, tangents):
    """func(*inputs) with `tangents` pushed forward: (outputs, is tuple, output tangents).

    Real forward mode when no level is open; inside one (forward mode does not nest) the
    double-backward trick: J·t = ∂/∂u ⟨u, J ...⟩ — the VJP is linear in its seed u."""
    if forward_ad._state.level is None:
        with forward_ad.dual_level():
            duals = tuple(x if t is None else forward_ad.make_dual(x, t) for x, t in zip(inputs, tangents))
            is_tuple, outputs = _as_tuple(func(*duals), "outputs of the user-provided function", "jvp")
            unpacked = [forward_ad.unpack_dual(o) for o in outputs]
        # the outputs themselves (their own grad_fn, as torch's jvp returns them), not views of them
        return outputs, is_tuple, tuple(
            u.tangent if u.tangent is not None else zeros_like(u.primal) for u in unpacked)
    inputs = tuple(track(x) for x in inputs)
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
    seeds = tuple(zeros_like(o).requires_grad_() for o in outputs)
    grads = _autograd_grad(outputs, inputs, seeds, create_graph=True)
    pairs = [(g, t) for g, t in zip(grads, tangents) if g is not None and t is not None and g.requires_grad]
    found = _autograd_grad(tuple(g for g, _ in pairs), seeds, tuple(t for _, t in pairs), create_graph=True) \
        if pairs else (None,) * len(seeds)
    return outputs, is_tuple, tuple(f if f is not None else zeros_like(o) for f, o in zip(found, outputs))


def track(x):
    """A handle on x that requires grad and is still connected to x's graph and its tangent."""
    if x.requires_grad:
        return x.view_as(x)
    tangent = forward_ad.tangent_of(x)
    handle = x.detach().requires_grad_()
    if tangent is not None:
        forward_ad._attach(handle, tangent)
    return handle


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): by forward mode, the tangent v pushed through func; with create_graph,
    by torch's double-backward trick (J v = ∂/∂u ⟨u, J⟩ v), so the result's graph is torch's."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp",
                       "input to the user-provided function is")
        if create_graph:
            is_outputs_tuple, outputs = _outputs_of(func, inputs, "jvp", strict)
            seeds = tuple(zeros_like(o, requires_grad=True) for o in outputs)
            grad_inputs = _autograd_grad(outputs, inputs, seeds, create_graph=True)
            _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
            tangents = _fill_in_zeros(_autograd_grad(grad_inputs, seeds, v, create_graph=True), outputs, strict,
                                      create_graph, "back_trick")
        else:
            v = v if v is not None else (ones_like(inputs[0]),)
            outputs, is_outputs_tuple, tangents = _forward(func, inputs, v)
            _check_requires_grad(outputs, "outputs", strict=strict)
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(tangents, create_graph), is_outputs_tuple))


def _one_hot(like, k: int):
    """A seed of like's shape and dtype: 1 at flat index k, 0 elsewhere."""
    seed = np.zeros(like.numel(), dtype=like._data.dtype)
    seed[k] = 1
    return Tensor._make(seed.reshape(tuple(like.shape)))


def _stack_rows(rows: list, out_shape: tuple, in_shape: tuple, create_graph: bool, columns: bool = False):
    """Rows (reverse mode) or columns (forward mode) of one Jacobian block, as one tensor
    of shape out_shape + in_shape; with create_graph the stacking is recorded too."""
    n_out = int(np.prod(out_shape, dtype=int))
    n_in = int(np.prod(in_shape, dtype=int))
    if create_graph:
        # torch stacks the rows as they come (each of the input's shape), then views the stack
        parts = [r.reshape(-1) for r in rows] if columns else list(rows)
        jac = Tensor._namespace.stack(parts, 1 if columns else 0) if parts else None
        if jac is None:
            return zeros(tuple(out_shape) + tuple(in_shape))
        return jac.reshape(*(tuple(out_shape) + tuple(in_shape)))
    data = [np.asarray(r._data).reshape(-1) for r in rows]
    block = np.stack(data, axis=1 if columns else 0) if data else np.zeros((n_out, n_in))
    return Tensor._make(block.reshape(tuple(out_shape) + tuple(in_shape)))


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of func at inputs: one backward pass per output element (reverse mode)
    or one forward pass per input element (strategy="forward-mode", which torch allows
    only with vectorize=True)."""
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                                      'mode"` are not supported together (yet). Please either set `create_graph=False` '
                                      'or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        blocks = []
        for i, out in enumerate(outputs):
            rows: list = [[] for _ in inputs]
            for k in range(out.nelement()):
                grads = _autograd_grad((out,), inputs, (_one_hot(out, k),), retain_graph=True,
                                       create_graph=create_graph)
                for j, g in enumerate(grads):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = zeros_like(inputs[j])
                    rows[j].append(g)
            blocks.append(tuple(_stack_rows(rows[j], tuple(out.shape), tuple(x.shape), create_graph)
                                for j, x in enumerate(inputs)))
        return _tuple_postprocess(_grad_postprocess(tuple(blocks), create_graph) if blocks else (),
                                  (is_outputs_tuple, is_inputs_tuple))


def _jacfwd(func, inputs, strict: bool, vectorize: bool):
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
                           "supported together (yet). Please either set `strict=False` or `strategy=\"reverse-mode\"`.")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    columns: list = []     # columns[j][i]: the tangents of output i for each basis vector of input j
    is_outputs_tuple, outputs = False, ()
    for j, x in enumerate(inputs):
        per_output = None
        for k in range(x.nelement()):
            tangents = tuple(_one_hot(x, k) if jj == j else None for jj in range(len(inputs)))
            outputs, is_outputs_tuple, tans = _forward(func, inputs, tangents)
            if per_output is None:
                per_output = [[] for _ in outputs]
            for i, t in enumerate(tans):
                per_output[i].append(t)
        columns.append(per_output)
    if not columns or columns[0] is None:   # an input with no elements: run once for the output shapes
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
    # lists, not tuples: torch's forward-mode jacobian returns them (a list of lists for tuples in and out)
    blocks = [[_stack_rows(columns[j][i] if columns[j] is not None else [], tuple(out.shape), tuple(x.shape), False,
                           columns=True) for j, x in enumerate(inputs)] for i, out in enumerate(outputs)]
    return _tuple_postprocess(blocks, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Jacobian of the gradient of a scalar function (the inner gradient with create_graph=True)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) if t.is_leaf else t for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac if isinstance(jac, tuple) else (jac,), "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function(func, inputs, fn_name: str, strict: bool):
    is_outputs_tuple, outputs = _outputs_of(func, inputs, fn_name, strict)
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), vᵀ H): reverse over reverse."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp", "input to the user-provided function is")
        outputs = _scalar_function(func, inputs, "vhp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), False),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v): forward over reverse, the tangent v pushed through the gradient."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp", "input to the user-provided function is")
        v = v if v is not None else (ones_like(inputs[0]),)
        holder = {}

        def gradient(*xs):
            outputs = _scalar_function(func, xs, "hvp", strict)
            holder["outputs"] = outputs
            jac = _autograd_grad(outputs, xs, create_graph=True)
            _check_requires_grad(jac, "jacobian", strict=strict)
            return _fill_in_zeros(jac, xs, False, True, "back")

        _, _, result = _forward(gradient, inputs, v)
        outputs = tuple(forward_ad.unpack_dual(o).primal if forward_ad._state.level is not None else o
                        for o in holder["outputs"])
        if strict:
            for i, r in enumerate(result):
                if create_graph and not r.requires_grad:
                    raise RuntimeError(f"The hessian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode when create_graph=True.")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), False),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


# -- gradcheck --------------------------------------------------------------------------------
class GradcheckError(RuntimeError):
    """gradcheck's failure, named as torch's (torch.autograd.gradcheck.GradcheckError)."""


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None) -> bool:
    """Compare the engine's vector-Jacobian products with central finite differences.

    Like torch.autograd.gradcheck, inputs should be float64 tensors with requires_grad=True
    (others are warned about); a mismatch shows both Jacobians of one output and one input.
    fast_mode compares one number per input and output instead of whole Jacobians: v^T J u for
    random unit vectors u, v drawn as torch draws them, so its messages print torch's numbers.
    Then, as torch, a zero grad_output must give zero gradients of the inputs' dtype and size (a
    backward that ignores its grad_output passes the Jacobian check on a one-element output).
    check_forward_ad compares the Jacobians forward mode computes too (slow mode only);
    check_backward_ad=False skips the backward checks, as torch's does. As torch's, every backward
    runs twice and must agree within nondet_tol ("reentrant"); check_grad_dtypes asks each gradient
    to have its input's dtype; check_undefined_grad runs the backward once more from zero
    grad_outputs (gradviz hands a Function's backward zeros where torch hands an undefined
    gradient, so only a backward that fails or answers nonzero on zeros is caught). The batched
    checks (vmap over backward) are not written; `masked` matters only for sparse inputs."""
    assert check_forward_ad or check_backward_ad, \
        "Expected at least one of check_forward_ad or check_backward_ad to be True"
    if check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradviz's gradcheck does not run the batched-gradient checks (vmap over the "
                                  "backward): pass check_batched_grad=False and check_batched_forward_grad=False")
    if check_forward_ad and fast_mode:
        raise NotImplementedError("gradviz's gradcheck compares forward-mode Jacobians in slow mode only: "
                                  "pass fast_mode=False with check_forward_ad=True")
    xs = inputs if isinstance(inputs, tuple) else (inputs,)
    for idx, x in enumerate(xs):
        if isinstance(x, Tensor) and x.requires_grad and x._data.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=2)
    diff = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
    outs = [(oi, o) for oi, o in enumerate(_as_tuple(func(*xs))[1]) if o.requires_grad]
    try:
        if check_backward_ad:
            (_fast_check if fast_mode else _slow_check)(func, xs, diff, outs, eps, atol, rtol,
                                                        (nondet_tol, check_grad_dtypes))
        if check_forward_ad:
            _forward_check(func, xs, diff, outs, eps, atol, rtol)
        if check_backward_ad:
            if outs and diff:
                _backward_mul_by_grad_output([o for _, o in outs], diff)
            if check_undefined_grad:
                _undefined_backward(func, xs, diff, len(outs))
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _backward_mul_by_grad_output(outs: list, diff: list) -> None:
    """torch's _test_backward_mul_by_grad_output: zero grad_outputs give zero input gradients, of
    each input's dtype, device and size."""
    grads = grad(outs, diff, [zeros_like(o) for o in outs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        if not bool((gi == 0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


def _undefined_backward(func, xs, diff: list, n_outputs: int) -> None:
    """torch's _test_undefined_backward_mode: from zero grad_outputs (all at once, then, with several
    outputs, one at a time) every input gradient is None or zero, and the backward does not fail."""
    if not diff:
        raise GradcheckError("no Tensors requiring grad found in input")
    runs = 1 + (n_outputs if n_outputs > 1 else 0)
    for _ in range(runs):   # torch calls func once per run
        outs = [o for o in _as_tuple(func(*xs))[1] if isinstance(o, Tensor) and o.requires_grad]
        try:
            grads = grad(outs, diff, [zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            _warn_undefined_check()
            raise GradcheckError("Expected backward function to handle undefined output grads. Please look at "
                                 "\"Notes about undefined output gradients\" in \"tools/autograd/derivatives.yaml\"") \
                from e
        if any(g is not None and not bool((g == 0).all()) for g in grads):
            _warn_undefined_check()
            raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                 "undefined or zero. Please look at \"Notes about undefined output gradients\" in "
                                 "\"tools/autograd/derivatives.yaml\"")


def _warn_undefined_check() -> None:
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
                  "but it may break existing callers of this function. If this is true for you, you can call this "
                  "function with \"check_undefined_grad=False\" to disable the feature", stacklevel=4)


FAILED_NONDET_MSG = (
    "\n\nNOTE: If your op relies on non-deterministic operations i.e., it is listed here:\n"
    "https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html\nthis failure might be "
    "expected.\n\nIf you are adding a new operator, please file an issue and then use one of the\nworkarounds. The "
    "workaround depends on how your test invokes gradcheck/gradgradcheck.\nIf the test\n- manually invokes "
    "gradcheck/gradgradcheck, then call gradcheck/gradgradcheck\n  with `nondet_tol=<tol>` as a keyword argument.\n"
    "- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test\n  to have "
    "`gradcheck_nondet_tol=<tol>`.\n- is a Module test (e.g., in common_nn.py), then modify the corresponding\n  "
    "module_test entry to have `gradcheck_nondet_tol=<tol>`\n")


def _twice(vjps, diff: list, attributes) -> list:
    """torch's _check_analytical_jacobian_attributes: `vjps()` (one array per input) is computed twice and
    must agree within nondet_tol; with check_grad_dtypes each must have its input's dtype."""
    nondet_tol, check_grad_dtypes = attributes
    first, second = vjps(), vjps()
    if check_grad_dtypes and any(j.dtype != x._data.dtype for j, x in zip(first, diff)):
        raise GradcheckError("Gradient has dtype mismatch")
    if any(a.size and float(abs(a - b).max()) > nondet_tol for a, b in zip(first, second)):
        raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                             "multiple times gives different values, although analytical gradient matches "
                             f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
                             + FAILED_NONDET_MSG)
    return first


def _analytic_jacobians(o, diff: list) -> list:
    """d o / d x for every x of diff, from one backward per element of o (torch's layout: the
    input's elements by the output's)."""
    rows = [grad(o, diff, _one_hot(o, k), retain_graph=True, allow_unused=True, materialize_grads=True)
            for k in range(o.numel())]
    return [np.stack([row[xi]._data.reshape(-1) for row in rows], axis=1)   # the input's dtype, as torch's
            if rows else np.zeros((x.numel(), 0)) for xi, x in enumerate(diff)]


def _slow_check(func, xs, diff, outs, eps, atol, rtol, attributes=(0.0, False)) -> None:
    numeric_of = {}   # id(x) -> numerical Jacobian of every output w.r.t. x, computed once
    for oi, o in outs:
        analytics = _twice(lambda: _analytic_jacobians(o, diff), diff, attributes)
        for xi, (x, analytic) in enumerate(zip(diff, analytics)):
            if id(x) not in numeric_of:
                numeric_of[id(x)] = _numeric_jacobian(func, xs, x, eps)
            numeric = numeric_of[id(x)][oi].T
            if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
                raise GradcheckError(f"Jacobian mismatch for output {oi} with respect to input {xi},\n"
                                     f"numerical:{Tensor._make(numeric)!r}\nanalytical:{Tensor._make(analytic)!r}\n")


def _forward_check(func, xs, diff, outs, eps, atol, rtol) -> None:
    """The Jacobians forward mode pushes one-hot tangents through, against the same finite
    differences (torch's check_forward_ad, slow mode), in torch's order and words."""
    columns = {}   # id(x) -> per output, the tangents of the output for each one-hot tangent of x
    for x in diff:
        runs = [_forward(func, xs, tuple(_one_hot(x, k) if t is x else None for t in xs))[2]
                for k in range(x.numel())]
        columns[id(x)] = runs
    numeric_of = {id(x): _numeric_jacobian(func, xs, x, eps) for x in diff}
    for oi, o in outs:
        for xi, x in enumerate(diff):
            numeric = numeric_of[id(x)][oi].T
            analytic = np.stack([run[oi]._data.reshape(-1) for run in columns[id(x)]]).astype(np.float64, copy=False) \
                if columns[id(x)] else np.zeros((0, o.numel()))
            if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
                raise GradcheckError(f"Jacobian computed with forward mode mismatch for output {oi} with respect to "
                                     f"input {xi},\nnumerical:{Tensor._make(numeric)!r}\n"
                                     f"analytical:{Tensor._make(analytic)!r}\n")


def _fast_check(func, xs, diff, outs, eps, atol, rtol, attributes=(0.0, False)) -> None:
    """torch's fast gradcheck: per input i and output j, v_j^T J_ji u_i two ways (finite
    differences along u_i; one backward of v_j), with atol scaled by sum(u_i) sum(v_j)."""
    generator = Generator()   # a fresh one, as torch: the learner's random stream is untouched

    def unit_vector(t):
        vec = rand(t.numel(), generator=generator).to(t.dtype)   # drawn in the default dtype, as torch
        return vec / vec.norm()

    us = [unit_vector(x) for x in diff]
    vs = [unit_vector(o) for _, o in outs]
    analytic = []   # [j][i]: (v_j^T J_ji) . u_i from one backward per output
    for (_, o), v in zip(outs, vs):
        vjs = _twice(lambda: [g._data for g in grad(o, diff, v.reshape(o.shape), retain_graph=True, allow_unused=True,
                                                    materialize_grads=True)], diff, attributes)
        analytic.append([Tensor._make(vj).reshape(-1).dot(u) for vj, u in zip(vjs, us)])
    for i, (x, u) in enumerate(zip(diff, us)):
        delta = u.reshape(x.shape) * eps
        data, orig = x._data, x._data.copy()
        with no_grad():
            data[...] = orig - delta._data
            below = [o.detach().clone() for o in _as_tuple(func(*xs))[1]]
            data[...] = orig + delta._data
            above = [o.detach().clone() for o in _as_tuple(func(*xs))[1]]
            data[...] = orig
        for j, ((oi, _), v) in enumerate(zip(outs, vs)):
            ju = ((above[oi] - below[oi]) / (2 * eps)).reshape(-1)
            numeric, a = (v * ju).sum(), analytic[j][i]   # as torch sums it
            tolerance = atol * float(u.sum()) * float(v.sum())
            if not np.allclose(a._data, numeric._data, rtol=rtol, atol=tolerance):
                raise GradcheckError(f"Jacobian mismatch for output {j:d} with respect to input {i:d},\n"
                                     f"numerical:{numeric}\nanalytical:{a}\n"
                                     + _slow_mode_report(func, xs, diff, outs[j], i, eps, atol, rtol))


FAST_FAIL_SLOW_OK_MSG = (
    "Fast gradcheck failed but element-wise differences are small. This means that the\ntest might've passed in "
    "slow_mode!\n\nIf you are adding a new operator, please file an issue and then use one of the\nworkarounds. The "
    "workaround depends on how your test invokes gradcheck/gradgradcheck:\n\nIf the test\n- manually invokes "
    "gradcheck/gradgradcheck, then call gradcheck/gradgradcheck\n  with `fast_mode=False` as a keyword argument.\n"
    "- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test\n  to have "
    "`gradcheck_fast_mode=False`\n- is a Module test (e.g., in common_nn.py), then modify the corresponding\n  "
    "module_test entry to have `gradcheck_fast_mode=False`")


def _slow_mode_report(func, xs, diff, out, xi, eps, atol, rtol) -> str:
    """What torch appends to a fast-mode failure: both whole Jacobians, and whether slow mode passes."""
    oi, o = out
    numeric = _numeric_jacobian(func, xs, diff[xi], eps)[oi].T
    analytic = _analytic_jacobians(o, diff)[xi]
    message = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
               "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
               "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
               f"Numerical:\n {Tensor._make(numeric)}\nAnalytical:\n{Tensor._make(analytic)}\n\n"
               f"The max per-element difference (slow mode) is: {Tensor._make(np.abs(numeric - analytic).max())}.\n")
    if np.allclose(analytic, numeric, rtol=rtol, atol=atol):
        message += FAST_FAIL_SLOW_OK_MSG
    return message


def _numeric_jacobian(func, xs, x, eps):
    """Per output, the matrix d out[k] / d x[j] by central differences: 2 evaluations per
    element of x. Elements are visited by index, so a non-contiguous x is perturbed in place.
    As torch's, each difference is taken in its output's dtype (a float32 one is as coarse as it
    is under torch, which is why gradcheck asks for float64). func runs twice per element and no
    more (its outputs' shapes come from the first run), as torch's, so a func drawing random numbers
    leaves the stream where torch's gradcheck leaves it."""
    data = x._data

    def allocate(outputs):
        return [np.zeros((o.size, data.size), dtype=o.dtype if o.dtype.kind in "fc" else np.float64) for o in outputs]
    with no_grad():
        jacobians = None
        for j, idx in enumerate(np.ndindex(data.shape)):
            orig = data[idx]
            data[idx] = orig + eps   # copies: an output may be a view of x
            plus = [backend.to_numpy(o._data).copy().reshape(-1) for o in _as_tuple(func(*xs))[1]]
            data[idx] = orig - eps
            minus = [backend.to_numpy(o._data).copy().reshape(-1) for o in _as_tuple(func(*xs))[1]]
            data[idx] = orig
            jacobians = allocate(plus) if jacobians is None else jacobians
            for jac, p, m in zip(jacobians, plus, minus):
                jac[:, j] = (p - m) / jac.dtype.type(2 * eps)
        if jacobians is None:   # x has no elements: one run for the outputs' sizes
            jacobians = allocate([backend.to_numpy(o._data) for o in _as_tuple(func(*xs))[1]])
    return jacobians


def _random_seed_like(out: Tensor, noncontiguous: bool) -> Tensor:
    """torch's gradgradcheck seed for `out`: torch.testing.make_tensor(out.shape, low=-1, high=1), uniform
    from the global generator (so the learner's random stream moves as under torch); non-contiguous,
    the odd elements of a last axis drawn twice as long."""
    dtype = out.dtype if out.is_floating_point() else float64
    noncontiguous = noncontiguous and out.numel() > 1
    shape = tuple(out.shape[:-1]) + (2 * out.shape[-1],) if noncontiguous else tuple(out.shape)
    seed = empty(shape, dtype=dtype, device=out.device).uniform_(-1, 1)
    if noncontiguous:
        seed = Tensor._make(seed._data[..., 1::2])
    return seed.requires_grad_()


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False) -> bool:
    """Check second derivatives: gradcheck of the map (inputs, ḡ) -> VJP(inputs, ḡ), which
    is differentiable only when every backward on the way records its own graph."""
    xs = _as_tuple(inputs)[1]
    if grad_outputs is None:
        outs = [o for o in _as_tuple(func(*xs))[1] if isinstance(o, Tensor) and o.requires_grad]
        grad_outputs = tuple(_random_seed_like(o, gen_non_contig_grad_outputs) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)[1]
    n_grads = len(grad_outputs)

    def vjp_of(*args):
        with enable_grad():   # the finite differences run under no_grad; the VJP needs its graph
            args_in, seeds = args[:-n_grads], args[-n_grads:]
            outs = [o for o in _as_tuple(func(*args_in))[1] if isinstance(o, Tensor) and o.requires_grad]
            diff = [x for x in args_in if isinstance(x, Tensor) and x.requires_grad]
            grads = grad(outs, diff, seeds, create_graph=True, allow_unused=True)
            return tuple(g for g in grads if g is not None)
    return gradcheck(vjp_of, xs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)
