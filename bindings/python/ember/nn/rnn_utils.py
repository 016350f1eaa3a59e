"""ember.nn.utils.rnn: pack_padded_sequence / pad_packed_sequence for ember.nn.LSTM / GRU (torch.nn.utils.rnn's
names and arguments).

A PackedSequence here keeps the padded batch and its lengths rather than torch's time-interleaved data: the RNNs
run padded batches with per-sequence masks (engine/nn/rnn_base.hpp explains why this equals packing), so nothing
needs reordering. pack -> LSTM -> pad gives torch's values: outputs zero past each length, max(lengths) steps,
final states at each sequence's last valid step. `data` is therefore not torch's packed layout."""
from collections import namedtuple

from .. import creation
from .._tensor_functions import cat
from ..tensor import Tensor

PackedSequence = namedtuple("PackedSequence", ["data", "lengths", "batch_first"])
PackedSequence.__doc__ = "A padded batch with its sequence lengths (a list of ints) and its layout."


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        lengths = lengths.tolist()
    out = [int(v) for v in lengths]
    if any(v <= 0 for v in out):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    return out


def _valid_mask(lengths, steps, batch_first, dtype, device):
    """1.0 inside each sequence, 0.0 past its length: [N, T, 1] (batch_first) or [T, N, 1]."""
    rows = [[[1.0 if t < n else 0.0] for t in range(steps)] for n in lengths]
    mask = creation.tensor(rows, dtype=dtype, device=device)
    return mask if batch_first else mask.transpose(0, 1)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002
    lengths = _lengths_list(lengths)
    if enforce_sorted and any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    batch = input.shape[0 if batch_first else 1]
    if len(lengths) != batch:
        raise ValueError("Expected `len(lengths)` to be equal to batch_size, but got %d (batch_size=%d)"
                         % (len(lengths), batch))
    return PackedSequence(input, lengths, batch_first)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded output, lengths as an int64 tensor), max(lengths) steps unless total_length is given."""
    data, lengths = sequence.data, sequence.lengths
    if sequence.batch_first != batch_first:
        data = data.transpose(0, 1)
    steps = max(lengths)
    time_dim = 1 if batch_first else 0
    have = data.shape[time_dim]
    if total_length is not None and total_length < steps:
        raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but got "
                         "total_length=%d and max sequence length being %d" % (total_length, steps))
    want = steps if total_length is None else total_length
    if have > want:
        data = data[:, :want] if batch_first else data[:want]
    if padding_value != 0.0 or have < want:
        mask = _valid_mask(lengths, want, batch_first, data.dtype, data.device)
        if have < want:
            shape = list(data.shape)
            shape[time_dim] = want - have
            pad = creation.zeros(*shape, dtype=data.dtype, device=data.device)
            data = cat([data, pad], time_dim)
        if padding_value != 0.0:
            data = data * mask + (mask * -1.0 + 1.0) * float(padding_value)
    return data, creation.tensor(lengths, dtype="int64")
