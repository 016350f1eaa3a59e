"""ember.nn.LSTM and ember.nn.GRU (torch.nn's, PyTorch 1.13 semantics without proj_size): torch-layout params
weight_ih_l{k}[_reverse] [gates * hidden, in], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} with torch's gate order
(LSTM i, f, g, o; GRU r, z, n), so a torch state_dict loads as is.

forward(input, hx=None, lengths=None): input [T, N, input_size] ([N, T, ...] with batch_first; a 2-D input is one
unbatched sequence), hx = (h0, c0) for the LSTM or h0 for the GRU, each [num_layers * D, N, hidden] or None for
zeros. A padded batch is given either as lengths=[...] or as a PackedSequence of ember.nn.utils.rnn
.pack_padded_sequence; the result is torch's pack_padded_sequence -> RNN -> pad_packed_sequence: the output has
max(lengths) steps and is zero past each length, final states are taken at each sequence's last valid step and the
reverse direction starts at each sequence's own end. Masks do that (a sequence past its length keeps its state and
outputs zero), as in the C++ engine's nn::LSTM / nn::GRU (engine/nn/rnn_base.hpp). The input projection of a whole
sequence is one matmul per layer and direction; each step is a hidden matmul and a few elementwise ops."""
import math
import sys

from .. import creation
from .._tensor_functions import cat, stack
from . import functional as F
from . import init
from . import rnn_utils
from . import utils as _utils
from .module import Module
from .parameter import Parameter

# ember.nn.utils is a module, torch's torch.nn.utils a package: make `ember.nn.utils.rnn` importable as torch's is.
_utils.rnn = rnn_utils
sys.modules[_utils.__name__ + ".rnn"] = rnn_utils


class _RNNBase(Module):
    _gates = 0
    _name = ""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be a positive integer")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be a positive integer")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        dirs = 2 if bidirectional else 1
        gh = self._gates * hidden_size
        opts = dict(dtype=dtype or "float32", device=device or "cpu")
        for k in range(num_layers):
            layer_in = input_size if k == 0 else hidden_size * dirs
            for suffix in ("", "_reverse")[:dirs]:
                self.register_parameter("weight_ih_l%d%s" % (k, suffix), Parameter(creation.zeros(gh, layer_in, **opts)))
                self.register_parameter("weight_hh_l%d%s" % (k, suffix),
                                        Parameter(creation.zeros(gh, hidden_size, **opts)))
                if bias:
                    self.register_parameter("bias_ih_l%d%s" % (k, suffix), Parameter(creation.zeros(gh, **opts)))
                    self.register_parameter("bias_hh_l%d%s" % (k, suffix), Parameter(creation.zeros(gh, **opts)))
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        s = "{}, {}".format(self.input_size, self.hidden_size)
        if self.num_layers != 1:
            s += ", num_layers={}".format(self.num_layers)
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += ", dropout={}".format(self.dropout)
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    # ------------------------------------------------------------ forward
    def _run(self, input, states, lengths):  # noqa: A002
        """The layer/direction loop on a time-major batch; states: one [L * D, N, H] tensor or None per state."""
        packed = isinstance(input, rnn_utils.PackedSequence)
        if packed:
            lengths = input.lengths
            if input.batch_first != self.batch_first:
                raise ValueError("the PackedSequence's batch_first differs from the module's")
            input = input.data
        unbatched = input.dim() == 2
        if unbatched:
            input = input.unsqueeze(1)
            states = [None if s is None else s.unsqueeze(1) for s in states]
        elif input.dim() != 3:
            raise ValueError("%s: Expected input to be 2D or 3D, got %dD tensor" % (self._name, input.dim()))
        x = input.transpose(0, 1) if self.batch_first and not unbatched else input
        steps, n, features = x.shape
        if features != self.input_size:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected {}, got {}".format(
                self.input_size, features))
        dirs = 2 if self.bidirectional else 1
        h = self.hidden_size
        for s in states:
            if s is not None and tuple(s.shape) != (self.num_layers * dirs, n, h):
                raise RuntimeError("Expected hidden size {}, got {}".format(
                    (self.num_layers * dirs, n, h), list(s.shape)))
        masks = [None] * steps
        if lengths is not None:
            lengths = rnn_utils._lengths_list(lengths)
            if len(lengths) != n:
                raise ValueError("Expected `len(lengths)` to be equal to batch_size, but got %d (batch_size=%d)"
                                 % (len(lengths), n))
            if max(lengths) > steps:
                raise ValueError("a length of %d exceeds the input's %d steps" % (max(lengths), steps))
            steps = max(lengths)
            x = x[:steps]
            for t in range(min(lengths), steps):
                masks[t] = creation.tensor([[1.0 if t < ln else 0.0] for ln in lengths], dtype=x.dtype,
                                           device=x.device)
        params = self._parameters
        zeros = creation.zeros(n, h, dtype=x.dtype, device=x.device)
        finals = [[] for _ in states]
        for k in range(self.num_layers):
            outs = []
            for d, suffix in enumerate(("", "_reverse")[:dirs]):
                name = "l%d%s" % (k, suffix)
                w_ih, w_hh = params["weight_ih_" + name], params["weight_hh_" + name]
                b_ih, b_hh = params.get("bias_ih_" + name), params.get("bias_hh_" + name)
                gx = x.reshape(steps * n, x.shape[2]) @ w_ih.t()
                gx, b_hh_step = self._input_bias(gx, b_ih, b_hh)
                w_hh_t = w_hh.t()
                state = [zeros if s is None else s[k * dirs + d] for s in states]
                out = [None] * steps
                order = range(steps) if d == 0 else range(steps - 1, -1, -1)
                for t in order:
                    nxt = self._step(gx[t * n:(t + 1) * n], state, w_hh_t, b_hh_step, h)
                    m = masks[t]
                    if m is not None:  # past a sequence's end: keep its state, output zero
                        nxt = [s + m * (v - s) for s, v in zip(state, nxt)]
                        out[t] = nxt[0] * m
                    else:
                        out[t] = nxt[0]
                    state = nxt
                for f, s in zip(finals, state):
                    f.append(s)
                outs.append(stack(out, 0))
            x = outs[0] if dirs == 1 else cat(outs, 2)
            if k + 1 < self.num_layers and self.dropout:
                x = F.dropout(x, self.dropout, self.training)
        finals = [stack(f, 0) for f in finals]
        if unbatched:
            return x.squeeze(1), [f.squeeze(1) for f in finals]
        if self.batch_first:
            x = x.transpose(0, 1)
        if packed:
            x = rnn_utils.PackedSequence(x, lengths, self.batch_first)
        return x, finals


class LSTM(_RNNBase):
    """torch.nn.LSTM: forward(input, (h0, c0)=None, lengths=None) -> (output, (h_n, c_n))."""
    _gates = 4
    _name = "LSTM"

    def forward(self, input, hx=None, lengths=None):  # noqa: A002
        h0, c0 = (None, None) if hx is None else hx
        out, (h_n, c_n) = self._run(input, [h0, c0], lengths)
        return out, (h_n, c_n)

    @staticmethod
    def _input_bias(gx, b_ih, b_hh):
        # Both biases only ever appear summed: folded into the input projection once per sequence.
        return (gx if b_ih is None else gx + (b_ih + b_hh)), None

    @staticmethod
    def _step(gx, state, w_hh_t, _b_hh, h):
        g = gx + state[0] @ w_hh_t
        i, f = g[:, :h].sigmoid(), g[:, h:2 * h].sigmoid()
        c = f * state[1] + i * g[:, 2 * h:3 * h].tanh()
        return [g[:, 3 * h:].sigmoid() * c.tanh(), c]


class GRU(_RNNBase):
    """torch.nn.GRU: forward(input, h0=None, lengths=None) -> (output, h_n)."""
    _gates = 3
    _name = "GRU"

    def forward(self, input, hx=None, lengths=None):  # noqa: A002
        out, (h_n,) = self._run(input, [hx], lengths)
        return out, h_n

    @staticmethod
    def _input_bias(gx, b_ih, b_hh):
        # b_hn is scaled by r, so b_hh stays in the per-step hidden projection.
        return (gx if b_ih is None else gx + b_ih), b_hh

    @staticmethod
    def _step(gx, state, w_hh_t, b_hh, h):
        gh = state[0] @ w_hh_t
        if b_hh is not None:
            gh = gh + b_hh
        rz = (gx[:, :2 * h] + gh[:, :2 * h]).sigmoid()
        n = (gx[:, 2 * h:] + rz[:, :h] * gh[:, 2 * h:]).tanh()
        return [n + rz[:, h:] * (state[0] - n)]
