"""Positional embeddings (issue 13, h-rope): rotary_embedding over ember_tensor_rotary_embedding (the C function
RotaryEmbedding runs), and LearnedPositionalEmbedding, the same as ember::nn::LearnedPositionalEmbedding in C++."""
from .. import _lib, creation
from ..tensor import call
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["rotary_embedding", "LearnedPositionalEmbedding"]


def rotary_embedding(x, dim, base=10000.0, offset=0):
    """RoPE, GPT-NeoX / Hugging Face LLaMA's rotate_half convention, on the first `dim` features of float
    x [..., L, D] at positions offset .. offset + L - 1 (the other features pass through):
    out = x * cos(cat(f, f)) + cat(-x2, x1) * sin(cat(f, f)), f[t, i] = (offset + t) * base ** (-2 i / dim).
    Differentiable w.r.t. x; runs ember_tensor_rotary_embedding on x's device."""
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0 or dim % 2:
        raise ValueError("rotary_embedding: dim must be an even positive int, got %r" % (dim,))
    if x.ndim < 2:
        raise ValueError("rotary_embedding: x must be [..., L, D], got %d dim(s)" % x.ndim)
    if dim > x.shape[-1]:
        raise ValueError("RotaryEmbedding: dim %d exceeds the head dim %d" % (dim, x.shape[-1]))
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError("rotary_embedding: offset must be an int >= 0, got %r" % (offset,))
    return call(_lib.tensor_rotary_embedding, x._h, dim, float(base), offset)


class LearnedPositionalEmbedding(Module):
    """A learned absolute position embedding added to the input: weight [max_len, d_model] drawn from N(0, 1) (an
    nn.Embedding's, so a torch model's `pos_emb.weight` loads as is); forward(x, offset=0) adds
    weight[offset + t] to position t of x [T, N, d_model] ([N, T, d_model] with batch_first)."""

    def __init__(self, max_len, d_model, batch_first=False, device=None, dtype=None):
        super().__init__()
        for name, v in (("max_len", max_len), ("d_model", d_model)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError("LearnedPositionalEmbedding: %s must be a positive int, got %r" % (name, v))
        self.max_len, self.d_model, self.batch_first = max_len, d_model, batch_first
        self.weight = Parameter(creation.zeros(max_len, d_model, dtype=dtype or "float32", device=device or "cpu"))
        self.reset_parameters()

    def reset_parameters(self):
        init.normal_(self.weight)

    def forward(self, x, offset=0):
        if x.ndim != 3 or x.shape[2] != self.d_model:
            raise ValueError("LearnedPositionalEmbedding: input %s must be 3-D and end in d_model %d"
                             % (list(x.shape), self.d_model))
        t_len = x.shape[1 if self.batch_first else 0]
        if offset < 0 or offset + t_len > self.max_len:
            raise IndexError("LearnedPositionalEmbedding: positions [%d, %d) exceed max_len %d"
                             % (offset, offset + t_len, self.max_len))
        rows = self.weight[offset:offset + t_len]
        return x + (rows.reshape(1, t_len, self.d_model) if self.batch_first
                    else rows.reshape(t_len, 1, self.d_model))

    def extra_repr(self):
        return "{}, {}, batch_first={}".format(self.max_len, self.d_model, self.batch_first)
