"""A torch node's local Jacobians, read row by row: row k of J (∂ outputs / ∂ input) is the node's own
backward applied to the one-hot vector e_k over its flattened outputs, as gradviz's engine reads its
own (`local_jacobians`). Torch computes vector-Jacobian products only, so this is the one way to
see J; it is done for nodes whose outputs and inputs have at most `limit` elements each."""
from __future__ import annotations

import math

import numpy as np

from .graph import output_shape
from .support import is_accumulate, torch_module


def torch_jacobians(fn, limit: int = 64) -> tuple | None:
    """One (m, nᵢ) array per next_functions slot (None where nothing flows or a side is too large);
    None for a node that has none to show (AccumulateGrad, outputs over `limit`, not floating point)."""
    if is_accumulate(fn):
        return None
    torch = torch_module()
    try:
        meta = list(fn._input_metadata)
    except (AttributeError, RuntimeError):
        return None
    if not meta or any(not m.dtype.is_floating_point for m in meta):
        return None
    sizes = [math.prod(m.shape) for m in meta]
    if not 0 < sum(sizes) <= limit:
        return None
    shapes = [output_shape(nxt, nr) if nxt is not None else None for nxt, nr in fn.next_functions]
    wanted = [s is not None and 0 < math.prod(s) <= limit for s in shapes]
    if not any(wanted):
        return None
    rows: list = [[] for _ in shapes]
    try:
        with torch.no_grad():
            for k in range(sum(sizes)):
                sent = fn(*_one_hot(torch, meta, sizes, k))
                sent = sent if isinstance(sent, tuple) else (sent,)
                for i, want in enumerate(wanted):
                    if want:
                        g = sent[i] if i < len(sent) else None
                        if g is not None and tuple(g.shape) != shapes[i]:   # the engine sums a broadcast input's
                            g = g.sum_to_size(shapes[i])                      # gradient after the node: so do we
                        rows[i].append(np.zeros(math.prod(shapes[i])) if g is None
                                       else g.detach().double().cpu().numpy().ravel() + 0.0)   # no -0.0
    except (RuntimeError, TypeError):   # a node whose backward cannot run again (freed) or take this seed
        return None
    return tuple(np.stack(r) if want else None for r, want in zip(rows, wanted))


def _one_hot(torch, meta: list, sizes: list, k: int) -> tuple:
    """e_k over the concatenation of every output, each part in its output's shape, dtype and device."""
    parts = []
    for m, n in zip(meta, sizes):
        part = torch.zeros(n, dtype=m.dtype, device=m.device)
        if 0 <= k < n:
            part[k] = 1
        k -= n
        parts.append(part.reshape(tuple(m.shape)))
    return tuple(parts)
