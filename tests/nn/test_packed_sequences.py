"""nn.utils.rnn against torch: pad_sequence, pack_padded_sequence / pad_packed_sequence (sorted and
not), pack_sequence, unpack/unpad, the recurrent layers run on a PackedSequence (multi-layer,
bidirectional, batch_first; outputs, final states and gradients), torch's errors, and
parameters_to_vector / vector_to_parameters. (The snippet reads the functions off
torch.nn.utils.rnn: `from torch.nn.utils.rnn import ...` would import PyTorch's own.)"""
from __future__ import annotations

import textwrap

import gradviz
from tests.support.parity import gradviz_output, needs_torch, torch_output

pytestmark = needs_torch


def test_packed_sequences_through_the_recurrent_layers():
    source = textwrap.dedent("""
    rnn_utils = torch.nn.utils.rnn
    pack_padded_sequence, pad_packed_sequence = rnn_utils.pack_padded_sequence, rnn_utils.pad_packed_sequence
    pad_sequence, pack_sequence = rnn_utils.pad_sequence, rnn_utils.pack_sequence
    unpack_sequence, unpad_sequence = rnn_utils.unpack_sequence, rnn_utils.unpad_sequence
    torch.manual_seed(0)
    seqs = [torch.randn(n, 3) for n in (4, 2, 5)]
    padded = pad_sequence(seqs)
    print(padded.shape, pad_sequence(seqs, batch_first=True, padding_value=-1.0)[1],
          pad_sequence(seqs, padding_side="left")[:, 1])
    lengths = torch.tensor([4, 2, 5])
    packed = pack_padded_sequence(padded, lengths, enforce_sorted=False)
    print(packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices, packed.data.shape)
    out, lens = pad_packed_sequence(packed, batch_first=True, total_length=6)
    print(out.shape, lens, torch.equal(out[:, :5], padded.transpose(0, 1)))
    for rnn in (torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True), torch.nn.GRU(3, 4, batch_first=True),
                torch.nn.RNN(3, 2, nonlinearity="relu")):
        x = padded.transpose(0, 1) if rnn.batch_first else padded
        p = pack_padded_sequence(x, lengths, batch_first=rnn.batch_first, enforce_sorted=False)
        o, h = rnn(p)
        o_pad, o_len = pad_packed_sequence(o, batch_first=rnn.batch_first)
        h_n = h[0] if isinstance(h, tuple) else h
        (o_pad.sum() + h_n.pow(2).sum()).backward()
        print(type(o).__name__, o.data.shape, o_pad.sum(), h_n, o_len, rnn.weight_ih_l0.grad.sum())
        if isinstance(h, tuple):
            print(h[1].sum())
    srt = pack_sequence([seqs[2], seqs[0], seqs[1]])
    print(srt.sorted_indices, srt.batch_sizes, [u.shape for u in unpack_sequence(srt)])
    h0 = torch.ones(1, 3, 2)
    o, h = torch.nn.RNN(3, 2)(pack_padded_sequence(padded, lengths, enforce_sorted=False),
                              h0 * torch.tensor([[[1.0], [2.0], [3.0]]]))
    print(h)
    print([u.shape for u in unpad_sequence(padded, lengths)])
    padded = padded.transpose(0, 1)
    for bad in (lambda: pack_padded_sequence(padded, lengths), lambda: pack_padded_sequence(padded, [5, 0, 0]),
                lambda: pack_padded_sequence(padded, [5, 4]), lambda: pack_padded_sequence(padded[:, :0], [1, 1, 1]),
                lambda: pad_packed_sequence(packed, total_length=2)):
        try:
            bad()
        except (RuntimeError, ValueError) as e:
            print(type(e).__name__, e)
    print(torch.nn.utils.parameters_to_vector(torch.nn.Linear(2, 3).parameters()).shape)
    lin = torch.nn.Linear(2, 2)
    torch.nn.utils.vector_to_parameters(torch.arange(6.0), lin.parameters())
    print(lin.weight, lin.bias)
    """)
    ours, theirs = gradviz_output(source), torch_output(source)
    assert ours == theirs
    assert "PackedSequence" in ours[0]


def test_imports_by_torchs_paths():
    from gradviz.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_sequence
    packed = pack_padded_sequence(pad_sequence([gradviz.ones(2, 1), gradviz.ones(1, 1)]), [2, 1])
    assert isinstance(packed, PackedSequence) and packed.batch_sizes.tolist() == [2, 1]
