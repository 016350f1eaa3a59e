"""MultiheadAttention, TransformerEncoderLayer / TransformerDecoderLayer, TransformerEncoder / TransformerDecoder
(torch.nn's names, arguments, defaults and state_dict keys, PyTorch 1.13 semantics) and RotaryEmbedding, written
with ember's tensor ops, so autograd, .double() and state_dict work as for every other ember.nn module.

Masks: a bool mask marks positions that may NOT be attended (-inf), a float mask is added to the scores; the
attention mask and the key padding mask are merged into one additive bias (torch 1.13 does the same for the
combinations it accepts; it rejects a float key_padding_mask with a float attn_mask, which ember adds).
"""
import copy
import math

from .. import creation
from . import functional as F
from . import init
from .container import ModuleList
from .module import Module
from .modules import Dropout, Linear
from .norm_pool import LayerNorm
from .parameter import Parameter
from .positional import rotary_embedding

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "RotaryEmbedding"]


def _bias(mask, like):
    """The additive float bias of a bool (True = masked out) or float mask, in `like`'s dtype."""
    if mask is None:
        return None
    if mask.dtype == "bool":
        return creation.zeros(*mask.shape, dtype=like.dtype, device=like.device).masked_fill(mask, -math.inf)
    return mask if mask.dtype == like.dtype else mask.to(like.dtype)


def _attention_bias(attn_mask, key_padding_mask, n, h, tgt_len, src_len, like):
    """attn_mask [L, S] or [N * H, L, S] and key_padding_mask [N, S] as one bias broadcastable to [N, H, L, S]."""
    bias = None
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if list(attn_mask.shape) != [tgt_len, src_len]:
                raise RuntimeError("The shape of the 2D attn_mask is %s, but should be %s."
                                   % (list(attn_mask.shape), [tgt_len, src_len]))
            bias = _bias(attn_mask, like).reshape(1, 1, tgt_len, src_len)
        elif attn_mask.ndim == 3:
            if list(attn_mask.shape) != [n * h, tgt_len, src_len]:
                raise RuntimeError("The shape of the 3D attn_mask is %s, but should be %s."
                                   % (list(attn_mask.shape), [n * h, tgt_len, src_len]))
            bias = _bias(attn_mask, like).reshape(n, h, tgt_len, src_len)
        else:
            raise RuntimeError("attn_mask's dimension %d is not supported" % attn_mask.ndim)
    if key_padding_mask is not None:
        if list(key_padding_mask.shape) != [n, src_len]:
            raise RuntimeError("expecting key_padding_mask shape of %s, but got %s"
                               % ([n, src_len], list(key_padding_mask.shape)))
        kp = _bias(key_padding_mask, like).reshape(n, 1, 1, src_len)
        bias = kp if bias is None else bias + kp
    return bias


def _sdpa(q, k, v, bias, dropout_p, training):
    """softmax(q k^T / sqrt(head_dim) + bias) (dropout) v on [N, H, L, hd] heads; returns (out, weights)."""
    scores = (q * (1.0 / math.sqrt(q.shape[-1]))) @ k.transpose(-2, -1)
    if bias is not None:
        scores = scores + bias
    weights = F.dropout(scores.softmax(-1), dropout_p, training)
    return weights @ v, weights


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention: in_proj_weight [3E, E] / in_proj_bias [3E] (or q/k/v_proj_weight when kdim or
    vdim differ from embed_dim), out_proj (a Linear). add_bias_kv and add_zero_attn are not supported."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported")
        if embed_dim % num_heads != 0:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"dtype": dtype or "float32", "device": device or "cpu"}
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(creation.zeros(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(creation.zeros(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(creation.zeros(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(creation.zeros(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(creation.zeros(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _project(self, x, i):
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight[i * e:(i + 1) * e]
        else:
            w = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[i]
        b = None if self.in_proj_bias is None else self.in_proj_bias[i * e:(i + 1) * e]
        return F.linear(x, w, b)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True):
        """query [L, N, E], key [S, N, kdim], value [S, N, vdim] (batch_first: batch leading) ->
        (output like query, weights [N, L, S] averaged over heads or [N, H, L, S], or None)."""
        if not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        n, tgt_len, _ = query.shape
        src_len = key.shape[1]
        h, hd = self.num_heads, self.head_dim
        q = self._project(query, 0).reshape(n, tgt_len, h, hd).transpose(1, 2)
        k = self._project(key, 1).reshape(n, src_len, h, hd).transpose(1, 2)
        v = self._project(value, 2).reshape(n, src_len, h, hd).transpose(1, 2)
        bias = _attention_bias(attn_mask, key_padding_mask, n, h, tgt_len, src_len, q)
        heads, weights = _sdpa(q, k, v, bias, self.dropout, self.training)
        out = self.out_proj(heads.transpose(1, 2).reshape(n, tgt_len, self.embed_dim))
        if not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        return out, (weights.mean(1) if average_attn_weights else weights)

    def extra_repr(self):
        return "embed_dim={}, num_heads={}, batch_first={}".format(self.embed_dim, self.num_heads, self.batch_first)


def _activation(name):
    if callable(name):
        return name
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise RuntimeError("activation should be relu/gelu, not {}".format(name))


class TransformerEncoderLayer(Module):
    """torch.nn.TransformerEncoderLayer: self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """torch.nn.TransformerDecoderLayer: self_attn, multihead_attn, linear1, linear2, norm1..3, dropout1..3."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """torch.nn.TransformerEncoder: num_layers deep copies of encoder_layer (layers.<i>) and an optional norm.
    enable_nested_tensor is accepted and ignored (ember has no nested tensors: outputs are the regular path's)."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """torch.nn.TransformerDecoder: num_layers deep copies of decoder_layer (layers.<i>) and an optional norm."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        return x if self.norm is None else self.norm(x)


class RotaryEmbedding(Module):
    """Rotary position embedding, GPT-NeoX / Hugging Face LLaMA's half-rotation ("rotate_half") convention, on the
    first `dim` features of x [..., T, head_dim] at positions offset .. offset + T - 1 (the rest pass through):
    out = x * cos(cat(f, f)) + cat(-x2, x1) * sin(cat(f, f)), f[t, i] = (offset + t) * base ** (-2 i / dim).
    No params (the same as ember::nn::RotaryEmbedding in C++); runs ember_tensor_rotary_embedding."""

    def __init__(self, dim, base=10000.0):
        super().__init__()
        if dim <= 0 or dim % 2:
            raise ValueError("RotaryEmbedding: dim must be even and positive, got %r" % (dim,))
        self.dim, self.base = dim, base

    def forward(self, x, offset=0):
        return rotary_embedding(x, self.dim, self.base, offset)  # the C function ember_tensor_rotary_embedding

    def extra_repr(self):
        return "dim={}, base={}".format(self.dim, self.base)
