"""Fused nodes explained: what one torch node that does the work of many (an LSTM's every time step
and gate in MkldnnRnnLayerBackward0 on CPU, cuDNN's RNN, scaled dot-product attention) computes,
its inputs and outputs by name, and how its gradient flows, from a table of the fused nodes torch
makes. A node gradviz has no op record of, and that is in the table, gets these in place of
numbered inputs and no formula."""
from __future__ import annotations

from ..records import NodeRecord

# mkldnn's and cuDNN's RNN modes, as torch saves them in `_saved_mode`
_MODES = {0: "RNN_RELU", 1: "RNN_TANH", 2: "LSTM", 3: "GRU"}
_RNN_NODES = ("MkldnnRnnLayerBackward0", "CudnnRnnBackward0")
_ATTENTION_NODES = ("ScaledDotProductFlashAttentionForCpuBackward0", "ScaledDotProductEfficientAttentionBackward0",
                    "ScaledDotProductFlashAttentionBackward0", "ScaledDotProductCudnnAttentionBackward0")

_CELLS = {
    "LSTM": ("4 gates (i, f, g, o)",
             r"(i, f, g, o)_t = (\sigma, \sigma, \tanh, \sigma)($1 x_t + $3 + $2 h_{t-1} + $4),\quad "
             r"c_t = f_t \odot c_{t-1} + i_t \odot g_t,\quad h_t = o_t \odot \tanh c_t"),
    "GRU": ("3 gates (r, z, n)",
            r"(r, z)_t = \sigma($1 x_t + $3 + $2 h_{t-1} + $4),\quad n_t = \tanh($1 x_t + $3 + r_t \odot ($2 h_{t-1} + $4)),"
            r"\quad h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}"),
    "RNN_TANH": ("1 gate", r"h_t = \tanh($1 x_t + $3 + $2 h_{t-1} + $4)"),
    "RNN_RELU": ("1 gate", r"h_t = \operatorname{relu}($1 x_t + $3 + $2 h_{t-1} + $4)"),
}

_RNN_VJPS = ("W_ihᵀ ĝ_t at each step t, where ĝ_t is the gates' gradient, found backward through time from "
             "the last step to the first (ḡ of h_t and c_t carried back from step t + 1)",
             "Σ over steps t of ĝ_t x_tᵀ", "Σ over steps t of ĝ_t h_{t−1}ᵀ", "Σ over steps t of ĝ_t",
             "Σ over steps t of ĝ_t", "W_hhᵀ ĝ at the first step", "f ⊙ ḡ of c at the first step")


def _saved(fn, name, default=None):
    try:
        return getattr(fn, f"_saved_{name}")
    except (AttributeError, RuntimeError):
        return default


def _rnn(fn) -> dict | None:
    mode = _MODES.get(_saved(fn, "mode"))
    x = _saved(fn, "input")
    if mode is None or x is None or x.dim() != 3:
        return None
    steps, batch, features = tuple(x.shape)
    hidden = _saved(fn, "hidden_size")
    gates, cell = _CELLS[mode]
    direction = ", in reverse" if _saved(fn, "reverse") else ""
    fused = (f"{steps} time steps × {gates} of an {mode} layer ({features} → {hidden}, batch {batch}{direction}) "
             f"in one node")
    outputs = r"{$c}_1, {$c}_2, \ldots" if mode == "LSTM" else r"{$c}_1, {$c}_2"
    latex = (outputs + r" = \operatorname{" + mode + r"}($0) \text{ over } T = " + str(steps)
             + r" \text{ steps}:\; " + cell + r",\quad \text{one node for " + str(steps) + r" steps} \times \text{"
             + gates + r"; it returns every step's } h_t \text{, and the last } h_T"
             + (r", c_T" if mode == "LSTM" else ""))
    symbols = ("x", "W_ih", "W_hh", "b_ih", "b_hh", "h₀", "c₀")
    formula = (f"y, h_T{', c_T' if mode == 'LSTM' else ''} = {mode}(x) over T = {steps} steps, one cell per step "
               f"({gates}); y stacks every step's h_t")
    return dict(latex=latex, formula=formula, symbols=symbols[:len(fn.next_functions)], out_symbol="y",
                vjp_formulas=_RNN_VJPS[:len(fn.next_functions)], attrs=(("fused", fused),))


def _attention(fn) -> dict | None:
    fused = "the scores q kᵀ/√d, their softmax and the weighted sum of v in one node (the scores are never stored)"
    latex = (r"{$c}_1, {$c}_2, \ldots = \operatorname{softmax}\left(\frac{$0 $1^{\top}}{\sqrt{d}}\right) $2")
    return dict(latex=latex, formula="y = softmax(q kᵀ/√d) v", symbols=("q", "k", "v"), out_symbol="y",
                vjp_formulas=("(P ⊙ (ḡ vᵀ − rowsum(ḡ ⊙ y))) k / √d, P = softmax(q kᵀ/√d)",
                              "(P ⊙ (ḡ vᵀ − rowsum(ḡ ⊙ y)))ᵀ q / √d", "Pᵀ ḡ"),
                attrs=(("fused", fused),))


def is_recurrent(fn) -> bool:
    return type(fn).__name__ in _RNN_NODES


def fused_record(fn, **values) -> NodeRecord | None:
    """The NodeRecord of a fused node torch makes, explained; None for a node not in the table."""
    name = type(fn).__name__
    shown = _rnn(fn) if name in _RNN_NODES else _attention(fn) if name in _ATTENTION_NODES else None
    if shown is None:
        return None
    attrs = shown.pop("attrs") + tuple(values.pop("attrs", ()))
    return NodeRecord(**{**values, **shown, "attrs": attrs})
