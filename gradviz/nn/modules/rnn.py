"""torch.nn.modules.rnn: the recurrent cells, and the recurrent layers that unroll them over time,
per layer and direction."""
from __future__ import annotations

import math
import numbers
import warnings

from ... import creation
from .. import functional as F
from .. import init
from ...functions.shape import cat, stack
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module
from ..functional_layers import gru_step, lstm_step, rnn_relu_step, rnn_tanh_step


def _uniform_by_hidden(module) -> None:
    """The recurrent layers' and cells' reset_parameters, as torch's: every weight and bias
    U(−1/√hidden, 1/√hidden), in the order of parameters()."""
    bound = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


class RNNCellBase(Module):
    _gates, _kind = 1, "RNNCell"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = self._gates * hidden_size
        self.weight_ih = Parameter(creation.empty(rows, input_size, dtype=dtype))
        self.weight_hh = Parameter(creation.empty(rows, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(creation.empty(rows, dtype=dtype))
            self.bias_hh = Parameter(creation.empty(rows, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _uniform_by_hidden(self)

    def _batched(self, input, hx):
        """PyTorch's checks of the input's and the hidden state's dims, then both with a batch dim
        (the hidden state zeros when not given); the cell function checks their sizes."""
        lstm = self._gates == 4
        if input.ndim not in (1, 2):
            raise ValueError(f"{self._kind}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        for i, h in enumerate(() if hx is None else hx if lstm else (hx,)):
            if h.ndim not in (1, 2):
                raise ValueError(f"{self._kind}: Expected {f'hx[{i}]' if lstm else 'hidden'} to be 1D or 2D, got "
                                 f"{h.ndim}D instead")
        if input.ndim == 1:
            input = input.unsqueeze(0)
            if hx is not None:
                hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if lstm else hx.unsqueeze(0)
        if hx is None:
            zeros = creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (zeros, zeros) if lstm else zeros
        return input, hx

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, h = self._batched(input, hx)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        cell = F.rnn_tanh_cell if self.nonlinearity == "tanh" else F.rnn_relu_cell
        out = cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if input.ndim == 2 else out.squeeze(0)


class LSTMCell(RNNCellBase):
    _gates, _kind = 4, "LSTMCell"

    def forward(self, input, hx=None):
        x, hx = self._batched(input, hx)
        h, c = F.lstm_cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if input.ndim == 2 else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    _gates, _kind = 3, "GRUCell"

    def forward(self, input, hx=None):
        x, h = self._batched(input, hx)
        out = F.gru_cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if input.ndim == 2 else out.squeeze(0)


class RNNBase(Module):
    _gates, _lstm, _kind = 1, False, "RNN"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None, nonlinearity: str = "tanh"):
        super().__init__()
        if self._kind == "RNN" and nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        rate = float(dropout)   # torch converts it first: its error for what is no number
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size:
            raise NotImplementedError("LSTM with projections (proj_size > 0) is not supported")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, rate
        self.bidirectional, self.nonlinearity, self.proj_size = bidirectional, nonlinearity, proj_size
        dirs = 2 if bidirectional else 1
        rows = self._gates * hidden_size
        for layer in range(num_layers):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                width = input_size if layer == 0 else hidden_size * dirs
                setattr(self, "weight_ih" + sfx, Parameter(creation.empty(rows, width, dtype=dtype)))
                setattr(self, "weight_hh" + sfx, Parameter(creation.empty(rows, hidden_size, dtype=dtype)))
                if bias:
                    setattr(self, "bias_ih" + sfx, Parameter(creation.empty(rows, dtype=dtype)))
                    setattr(self, "bias_hh" + sfx, Parameter(creation.empty(rows, dtype=dtype)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _uniform_by_hidden(self)

    def flatten_parameters(self) -> None:
        """torch packs the weights into one cuDNN buffer here; without cuDNN (gradviz, and torch on
        the CPU) there is nothing to pack."""

    def _weights(self, layer, d):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda name: getattr(self, name + sfx, None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _step(self, xw, state, w_hh, b_hh):
        if self._lstm:
            return lstm_step(xw, state, w_hh, b_hh)
        if self._gates == 3:
            return gru_step(xw, state, w_hh, b_hh)
        return (rnn_tanh_step if self.nonlinearity == "tanh" else rnn_relu_step)(xw, state, w_hh, b_hh)

    def _checked(self, input, hx):
        """PyTorch's checks of the input and hidden state, then both as (seq, batch, features) and
        (layers · directions, batch, hidden), the hidden state zeros when not given."""
        lstm, kind = self._lstm, self._kind
        if input.ndim not in (2, 3):
            raise ValueError(f"{kind}: Expected input to be 2D or 3D, got {input.ndim}D{' tensor' * (kind == 'RNN')} "
                             "instead")
        batched = input.ndim == 3
        if hx is not None:
            dims = (hx[0].dim(), hx[1].dim()) if lstm else (hx.dim(),)   # a tuple for a GRU fails as torch's does
            if any(d != input.ndim for d in dims):
                got = f"({dims[0]}-D, {dims[1]}-D) tensors" if lstm else f"{dims[0]}-D tensor"
                raise RuntimeError(f"For {'batched 3-D' if batched else 'unbatched 2-D'} input, "
                                   f"{'hx and cx' if lstm else 'hx'} should also be {input.ndim}-D but got {got}")
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
        input = input.unsqueeze(1) if not batched else input.transpose(0, 1) if self.batch_first else input
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")
        size = (self.num_layers * (2 if self.bidirectional else 1), input.shape[1], self.hidden_size)
        if hx is None:
            zeros = creation.zeros(*size, dtype=input.dtype, device=input.device)
            return input, (zeros, zeros) if lstm else zeros
        for i, h in enumerate(hx if lstm else (hx,)):
            if tuple(h.shape) != size:
                raise RuntimeError(f"Expected hidden{f'[{i}]' if lstm else ''} size {size}, got {list(h.shape)}")
        return input, hx

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        batched = input.ndim == 3
        input, hx = self._checked(input, hx)
        output, h_n, c_n = self._layers(input, hx, lambda proj: proj.unbind(0), lambda seq: stack(seq, 0), 2)
        if not batched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        if self._lstm:
            return output, (h_n, c_n.squeeze(1) if not batched else c_n)
        return output, h_n

    def _forward_packed(self, input, hx):
        """A PackedSequence: at step t only its first batch_sizes[t] rows run (sequences sorted longest
        first); the output is packed the same way, the final state read per sequence."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        sizes = [int(b) for b in batch_sizes.tolist()]
        shape = (self.num_layers * (2 if self.bidirectional else 1), sizes[0], self.hidden_size)
        if hx is None:
            zeros = creation.zeros(*shape, dtype=data.dtype, device=data.device)
            hx = (zeros, zeros) if self._lstm else zeros
        elif sorted_indices is not None:   # the caller's batch order -> the packed (sorted) order
            hx = tuple(h.index_select(1, sorted_indices) for h in hx) if self._lstm \
                else hx.index_select(1, sorted_indices)
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{data.shape[-1]}")
        for i, h in enumerate(hx if self._lstm else (hx,)):
            if tuple(h.shape) != shape:
                raise RuntimeError(f"Expected hidden{f'[{i}]' if self._lstm else ''} size {shape}, got "
                                   f"{list(h.shape)}")
        output, h_n, c_n = self._layers(data, hx, lambda proj: proj.split(sizes), lambda seq: cat(seq, 0), 1)
        output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = c_n.index_select(1, unsorted_indices) if self._lstm else None
        return (output, (h_n, c_n)) if self._lstm else (output, h_n)

    def _layers(self, layer_input, hx, split, join, feature_dim):
        """Every layer and direction: the input's projection for every step at once, split into steps,
        the cell run over them, the steps' outputs joined; and the stacked final states."""
        dirs = 2 if self.bidirectional else 1
        h0 = hx[0].unbind(0) if self._lstm else hx.unbind(0)
        c0 = hx[1].unbind(0) if self._lstm else None
        finals_h, finals_c = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                state = (h0[k], c0[k]) if self._lstm else h0[k]
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, d)
                seq, state = self._direction(split(F.linear(layer_input, w_ih, b_ih)), state, w_hh, b_hh, d == 1)
                outs.append(join(seq))
                finals_h.append(state[0] if self._lstm else state)
                if self._lstm:
                    finals_c.append(state[1])
            layer_input = outs[0] if dirs == 1 else cat(outs, feature_dim)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, stack(finals_h, 0), stack(finals_c, 0) if self._lstm else None

    def _direction(self, steps, state, w_hh, b_hh, reverse: bool):
        """The cell over the steps (backwards when reverse), each step's output, and the final state.
        A step with fewer rows than the state (a packed batch) updates only those first rows; the
        others keep their state (their sequence has ended, or in reverse, not yet begun)."""
        seq = []
        for xw in (reversed(steps) if reverse else steps):
            rows = (state[0] if self._lstm else state).shape[0]
            if xw.shape[0] == rows:
                state = new = self._step(xw, state, w_hh, b_hh)
            else:
                b = xw.shape[0]
                new = self._step(xw, tuple(s[:b] for s in state) if self._lstm else state[:b], w_hh, b_hh)
                state = tuple(cat([n, s[b:]]) for n, s in zip(new, state)) if self._lstm else cat([new, state[b:]])
            seq.append(new[0] if self._lstm else new)
        if reverse:
            seq.reverse()
        return seq, state

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _no_projections(kwargs: dict) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        _no_projections(kwargs)
        if len(args) > 3:   # torch's RNN takes nonlinearity fourth, before bias
            kwargs["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        super().__init__(*args, **kwargs)


class LSTM(RNNBase):
    _gates, _lstm, _kind = 4, True, "LSTM"


class GRU(RNNBase):
    _gates, _kind = 3, "GRU"

    def __init__(self, *args, **kwargs):
        _no_projections(kwargs)
        super().__init__(*args, **kwargs)
