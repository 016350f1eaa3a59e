"""The LSTM / GRU golden cases shared by gen_rnn_reference.py (C++ header) and
bindings/python/tests/gen_rnn_expected.py (JSON): PyTorch 1.13's nn.LSTM / nn.GRU in float64 over a padded batch
of unsorted lengths through pack_padded_sequence -> RNN -> pad_packed_sequence, with initial states, and the
gradients of  loss = sum(output * w_out) + sum(h_n * w_h) [+ sum(c_n * w_c)]  w.r.t. the input, the initial states
and every param. Every input and param is rounded to float32 first, so float32 tests start from the same values."""
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

INPUT, HIDDEN, LAYERS, STEPS, BATCH = 3, 4, 2, 5, 3
LENGTHS = [5, 2, 4]  # unsorted (enforce_sorted=False); the output has max(LENGTHS) = STEPS steps


def f32(t):
    return t.to(torch.float32).to(torch.float64)


def run_case(kind, batch_first, lengths, with_state, seed):
    torch.manual_seed(seed)
    cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
    rnn = cls(INPUT, HIDDEN, num_layers=LAYERS, bidirectional=True, batch_first=batch_first).double()
    with torch.no_grad():
        for p in rnn.parameters():
            p.copy_(f32(p))
    shape = (BATCH, STEPS, INPUT) if batch_first else (STEPS, BATCH, INPUT)
    x = f32(torch.randn(shape, dtype=torch.float64)).requires_grad_()
    states = {}
    if with_state:
        states["h0"] = f32(torch.randn(LAYERS * 2, BATCH, HIDDEN, dtype=torch.float64)).requires_grad_()
        if kind == "lstm":
            states["c0"] = f32(torch.randn(LAYERS * 2, BATCH, HIDDEN, dtype=torch.float64)).requires_grad_()
    init = None
    if with_state:
        init = (states["h0"], states["c0"]) if kind == "lstm" else states["h0"]
    if lengths:
        packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=batch_first, enforce_sorted=False)
        out, fin = rnn(packed, init)
        out, _ = pad_packed_sequence(out, batch_first=batch_first)
    else:
        out, fin = rnn(x, init)
    finals = {"h_n": fin[0], "c_n": fin[1]} if kind == "lstm" else {"h_n": fin}
    weights = {"w_out": f32(torch.randn(out.shape, dtype=torch.float64))}
    loss = (out * weights["w_out"]).sum()
    for name, t in finals.items():
        weights["w_" + name[0]] = f32(torch.randn(t.shape, dtype=torch.float64))
        loss = loss + (t * weights["w_" + name[0]]).sum()
    loss.backward()
    tensors = {"x": x}
    tensors.update(states)
    tensors["output"] = out
    tensors.update(finals)
    tensors.update(weights)
    tensors["grad_x"] = x.grad
    for name, t in states.items():
        tensors["grad_" + name] = t.grad
    for name, p in rnn.named_parameters():  # PyTorch's names and layouts ([gates * hidden, in])
        tensors["param_" + name] = p
        tensors["grad_" + name] = p.grad
    return {k: v.detach() for k, v in tensors.items()}


# name: (kind, batch_first, lengths, with initial states, seed)
CASES = {
    "lstm_packed": ("lstm", False, LENGTHS, True, 1),
    "lstm_packed_batch_first": ("lstm", True, LENGTHS, True, 2),
    "lstm_full": ("lstm", False, None, False, 3),
    "gru_packed": ("gru", False, LENGTHS, True, 4),
    "gru_packed_batch_first": ("gru", True, LENGTHS, True, 5),
}


def all_cases():
    return {name: (spec, run_case(*spec)) for name, spec in CASES.items()}
