"""ember.nn.functional.scaled_dot_product_attention (issue 13): PyTorch 2's signature over
ember_scaled_dot_product_attention, which runs the backend's fused flash-attention kernel (no [L, S] score matrix
on the CPU, Vulkan and CUDA)."""
import math

from .. import _lib
from ..tensor import call


def _to_rank4(t, name):
    if not 2 <= t.ndim <= 4:
        raise ValueError("scaled_dot_product_attention: %s must have 2 to 4 dims ([B, H,] L, E), got %d"
                         % (name, t.ndim))
    return t.reshape(*([1] * (4 - t.ndim) + list(t.shape)))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """softmax(query @ key^T * scale + mask) @ value on [..., L, E] / [..., S, E] / [..., S, Ev] (up to 4 dims).

    attn_mask: None, a bool tensor (True: take part in attention, as PyTorch's) or a float tensor added to the
    scores, broadcastable to [B, H, L, S]. is_causal: query i sees keys j <= i (top-left aligned). scale: None for
    1 / sqrt(E). Rows that see no key give 0 (PyTorch gives NaN). dropout_p must be 0: attention dropout is not
    supported (the fused kernels have no random stream)."""
    if dropout_p != 0.0:
        raise ValueError("scaled_dot_product_attention: dropout_p must be 0.0 (attention dropout is not supported)")
    out_rank = query.ndim
    lead = list(query.shape[:-2])
    q, k, v = _to_rank4(query, "query"), _to_rank4(key, "key"), _to_rank4(value, "value")
    bias = None
    if attn_mask is not None:
        if attn_mask.dtype == "bool":
            bias = (attn_mask.to(query.dtype) * 0.0).masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            bias = attn_mask
        bias = _to_rank4(bias, "attn_mask")
    out = call(_lib.scaled_dot_product_attention, q._h, k._h, v._h, bias._h if bias is not None else None,
               1 if is_causal else 0, math.nan if scale is None else float(scale))
    if out_rank < 4:
        out = out.reshape(*(lead + list(out.shape[-2:])))
    return out
