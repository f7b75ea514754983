"""unroll=True: a fused recurrent node (nn.LSTM on CPU runs as one MkldnnRnnLayerBackward0) recorded
cell by cell and time step by time step.

The node keeps what its forward read: the input sequence (still joined to the real graph before
it, so the embedding that made it backpropagates as in torch), the module's own weights and the
initial states. Its cells are run again from these with torch's plain ops, one step after the
other, each step in a scope of its own under the module's. The graph after the node (the head, the
loss) is stood in for by what it sent back: the gradient ḡ the fused node received in torch's own
backward, so the recorded backward starts from L = Σ ⟨output, ḡ⟩, which has exactly that gradient,
and every gradient it finds (the weights', the input's, and upstream the embedding's) is torch's.
Where a graph holds several fused layers the one nearest the loss is unrolled.
"""
from __future__ import annotations

from contextlib import ExitStack

from .forward import record_forward
from .fused import is_recurrent
from .lines import line_of
from .support import torch_module

_GATES = {0: 1, 1: 1, 2: 4, 3: 3}   # the saved mode -> gates per cell (RNN_RELU, RNN_TANH, LSTM, GRU)


def received(fn, roots: tuple, gradient, grads) -> tuple:
    """The gradients node `fn` receives in torch's own backward from `roots` (clones), .grad put back."""
    torch = torch_module()
    got: list = []
    handle = fn.register_prehook(lambda grad_outputs: got.append(tuple(
        None if g is None else g.detach().clone() for g in grad_outputs)))
    try:
        torch.autograd.backward(roots, grad_tensors=gradient, retain_graph=True)
    finally:
        handle.remove()
        grads.restore()
    return got[0]


def _cell(torch, mode: int, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of the cell, as nn.LSTMCell / nn.GRUCell / nn.RNNCell compute it."""
    gi = x @ w_ih.t() + (b_ih if b_ih is not None else 0)
    gh = h @ w_hh.t() + (b_hh if b_hh is not None else 0)
    if mode == 2:   # LSTM
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c
    if mode == 3:   # GRU
        ir, iz, i_n = gi.chunk(3, 1)
        hr, hz, h_n = gh.chunk(3, 1)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        n = torch.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (torch.relu(pre) if mode == 0 else torch.tanh(pre)), None


def _run_cells(fn, record):
    """The fused node's forward again, step by step: (every step's h stacked, h_T[, c_T])."""
    torch = torch_module()
    mode = fn._saved_mode
    x = fn._saved_input
    weights = [fn._saved_weight0, fn._saved_weight1] + ([fn._saved_weight2, fn._saved_weight3]
                                                        if fn._saved_has_biases else [None, None])
    h, c = fn._saved_hx_, (fn._saved_cx_ if mode == 2 else None)
    steps = range(x.shape[0] - 1, -1, -1) if fn._saved_reverse else range(x.shape[0])
    ys = {}
    for k, t in enumerate(steps, 1):
        with record.scope(f"step {k}"):
            h, c = _cell(torch, mode, x[t], h, c, *weights)
        ys[t] = h
    with record.scope("outputs"):
        y = torch.stack([ys[t] for t in range(x.shape[0])])
    return (y, h, c) if mode == 2 else (y, h)


def unrolled(roots: tuple, gradient, order: list, naming, grads):
    """(the new root L, the ForwardRecord of its nodes' scopes and values) for the fused recurrent
    node nearest the loss in `order`; ValueError when the graph has none."""
    fused = [fn for fn in order if is_recurrent(fn)]
    if not fused:
        raise ValueError("unroll=True: the graph has no fused recurrent node (MkldnnRnnLayerBackward0, "
                         "CudnnRnnBackward0) to unroll")
    fn = fused[-1]
    if _GATES.get(fn._saved_mode) is None:
        raise ValueError(f"unroll=True: {type(fn).__name__} runs a recurrent mode gradviz does not know "
                         f"({fn._saved_mode})")
    seeds = received(fn, roots, gradient, grads)
    scope = naming.param_scopes.get(id(fn._saved_weight0))
    scope = scope if isinstance(scope, tuple) else ()   # a weight of no module, or tied to several
    with record_forward() as record:
        made = line_of(fn)   # the cells are the learner's LSTM call again, not the line asking to unroll
        record.line_for = lambda: made
        with ExitStack() as inside:   # the module's clusters, outermost first
            for segment in scope:
                inside.enter_context(record.scope(segment))
            outputs = _run_cells(fn, record)
        record.line_for = lambda: None   # L stands in for what the learner's code did after the LSTM
        with record.scope("the gradient the fused node received"):
            terms = [(o * g).sum() for o, g in zip(outputs, seeds) if g is not None]
            loss = terms[0]
            for term in terms[1:]:
                loss = loss + term
    return loss, record
