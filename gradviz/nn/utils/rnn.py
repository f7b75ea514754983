"""torch.nn.utils.rnn: sequences of different lengths for the recurrent layers, padded into one
tensor (pad_sequence) or packed time step by time step (PackedSequence: at step t, the rows of
the batch_sizes[t] sequences still running, longest first), and back."""
from __future__ import annotations

from collections import namedtuple

from ... import creation, dtypes
from ...functions.index import pack_padded
from ...tensor import Tensor


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """data holds step 0's rows, then step 1's, ...; batch_sizes how many each step has (sequences
    sorted longest first; sorted_indices maps that order back to the caller's batch)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        move = (lambda t: t.to(device)) if device.type != "cpu" else (lambda t: t)
        return type(self)(data, self.batch_sizes, *(None if t is None else move(t)
                                                    for t in (self.sorted_indices, self.unsorted_indices)))

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = creation.empty_like(permutation)
    output[permutation] = creation.arange(permutation.numel(), device=permutation.device)
    return output


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """The rows of a padded batch (T, B, *) (or (B, T, *)) that lengths says are real, step by step."""
    lengths = (lengths if isinstance(lengths, Tensor) else creation.as_tensor(lengths)).to(dtypes.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    sizes = [int(n) for n in lengths.tolist()]
    batch = input.shape[0 if batch_first else 1] if input.ndim > 1 else 0
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(sizes) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(sizes)} "
                           f"(batch_size={batch})")
    if sizes[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is "
                           "<= 0")
    if any(a < b for a, b in zip(sizes, sizes[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                           "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    data, batch_sizes = pack_padded(input, sizes, batch_first)
    return PackedSequence(data, creation.tensor(batch_sizes, dtype=dtypes.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length=None):
    """The padded batch and the lengths back from a PackedSequence, in the caller's batch order."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    padded = creation.full((max_seq_length, batch_sizes[0]) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                           device=data.device)
    offset = 0
    for t, b in enumerate(batch_sizes):
        padded[t, :b] = data[offset:offset + b]
        offset += b
    lengths = creation.tensor([sum(b > i for b in batch_sizes) for i in range(batch_sizes[0])], dtype=dtypes.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        return padded.index_select(0 if batch_first else 1, sequence.unsorted_indices), \
            lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    """Tensors of shape (L_i, *) stacked into (max L, B, *) (or (B, max L, *)), padded at the right
    (or left) with padding_value."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    longest = max(s.shape[0] for s in sequences)
    first = sequences[0]
    out = creation.full((len(sequences), longest) + tuple(first.shape[1:]), padding_value, dtype=first.dtype,
                        device=first.device)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        if padding_side == "right":
            out[i, :n] = s
        else:
            out[i, longest - n:] = s
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False):
    """The sequences back out of a padded batch; as torch's, a time-first batch is transposed in place."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    lengths = creation.as_tensor([v.shape[0] for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
