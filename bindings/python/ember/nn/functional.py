"""ember.nn.functional: PyTorch's functional names over libember ops.

Weights follow PyTorch's layouts (linear: weight [out_features, in_features]; conv2d: [out, in / groups, kH, kW]),
as the nn layers hold them.
"""
import math
from ctypes import byref, c_void_p, sizeof

from .. import _lib, autograd, errors
from .._assign import assign_
from .._tensor_functions import where
from ..tensor import as_tensor_like, call, wrap
from .._tensor_sort import one_hot  # noqa: F401  (issue 13: one C call, ember_tensor_one_hot)
from .functional_sdpa import scaled_dot_product_attention  # noqa: F401 (issue 13, h-flash)
from .positional import rotary_embedding  # noqa: F401 (issue 13, h-rope)

_REDUCTIONS = {"mean": 0, "sum": 1}


def _pair(v, name):
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) != 2 or not all(isinstance(i, int) for i in v):
        raise ValueError("%s must be an int or a pair of ints, got %r" % (name, v))
    return v


def _unary(x, code):
    return call(_lib.tensor_unary, x._h, code)


def relu(input, inplace=False):  # noqa: A002 (PyTorch's argument names)
    return _unary(input, 16)


def gelu(input, approximate="none"):  # noqa: A002
    """GELU with the exact erf form (approximate="none") or the tanh approximation ("tanh")."""
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh', got %r" % (approximate,))
    return _unary(input, 18 if approximate == "tanh" else 17)


def sigmoid(input):  # noqa: A002
    return _unary(input, 9)


def tanh(input):  # noqa: A002
    return _unary(input, 8)


def silu(input):  # noqa: A002
    return input * _unary(input, 9)


def leaky_relu(input, negative_slope=0.01):  # noqa: A002
    return where(input > 0, input, input * negative_slope)


def threshold(input, threshold, value):  # noqa: A002
    """input where input > threshold, else value."""
    return where(input > threshold, input, value)


def prelu(input, weight):  # noqa: A002
    """max(0, x) + weight * min(0, x); weight has 1 element or one per channel (dim 1 of input)."""
    w = weight
    n = weight.numel()
    if n != 1 and input.ndim >= 2:
        w = weight.reshape([n] + [1] * (input.ndim - 2))
    return _unary(input, 16) + w * input.clamp(max=0.0)


def softmax(input, dim=-1):  # noqa: A002
    return call(_lib.tensor_softmax, input._h, dim)


def log_softmax(input, dim=-1):  # noqa: A002
    return call(_lib.tensor_log_softmax, input._h, dim)


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction not in _REDUCTIONS:
        raise ValueError("reduction must be 'mean', 'sum' or 'none', got %r" % (reduction,))
    return loss.mean() if reduction == "mean" else loss.sum()


def nll_loss(input, target, reduction="mean"):  # noqa: A002
    """-input[i, target[i]] (input: log-probabilities [N, C]; target: int64 [N])."""
    picked = input.gather(1, target.reshape(-1, 1)).reshape(-1)
    return _reduce(-picked, reduction)


def cross_entropy(input, target, reduction="mean"):  # noqa: A002
    """Softmax cross-entropy of logits [N, C] against int64 class indices [N]; reduction mean | sum | none."""
    if reduction == "none":
        return nll_loss(log_softmax(input, 1), target, "none")
    if reduction not in _REDUCTIONS:
        raise ValueError("reduction must be 'mean', 'sum' or 'none', got %r" % (reduction,))
    return call(_lib.loss_cross_entropy, input._h, target._h, _REDUCTIONS[reduction])


def mse_loss(input, target, reduction="mean"):  # noqa: A002
    if reduction == "none":
        d = input - target
        return d * d
    if reduction not in _REDUCTIONS:
        raise ValueError("reduction must be 'mean', 'sum' or 'none', got %r" % (reduction,))
    target = as_tensor_like(target, input)
    return call(_lib.loss_mse, input._h, target._h, _REDUCTIONS[reduction])


def l1_loss(input, target, reduction="mean"):  # noqa: A002
    return _reduce((input - target).abs(), reduction)


# linear's calls without argtypes (_lib.py: hot, quick), given ctypes objects only
_linear = _lib.hot.tensor_linear


def linear(input, weight, bias=None):  # noqa: A002
    """input @ weight.T + bias, weight [out_features, in_features] as in PyTorch; input of any rank >= 1.

    The common case (float operands of one dtype and device, input rank >= 2) is one libember call on the handles,
    ember_tensor_linear: the weight read transposed in place and the bias added in the GEMM, one recorded op whose
    backward reads the transposes in place too (issue 14; it was a transposed copy of the weight, a matmul and an
    add, three ops forward and three backward). A layer's forward is the hottest small-op path of a model."""
    out = c_void_p()
    if input.ndim == 2:
        if not _linear(input._h, weight._h, None if bias is None else bias._h, 1, 0, byref(out)):
            return wrap(out)
    elif input.ndim > 2:
        # Leading dims fold into rows (a reshape shares the buffer) and come back after.
        rows = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
        if not _linear(rows._h, weight._h, None if bias is None else bias._h, 1, 0, byref(out)):
            y = wrap(out)
            return y.reshape(*input.shape[:-1], y.shape[-1])
    # anything else (a rank-1 input, mixed dtypes, a bad shape) goes through the Tensor methods and their errors
    x = input
    if x.ndim == 1:
        y = (x.reshape(1, -1) @ weight.t()).reshape(-1)
    else:
        y = x @ weight.t()
    return y if bias is None else y + bias


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-D convolution: input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or None.
    padding: an int, a pair, or "valid" (0)."""
    o = _lib.Conv2dOptions()
    o.struct_size = sizeof(o)
    _lib.check(_lib.conv2d_options_init(byref(o)))
    if padding == "valid":
        padding = 0
    o.stride[:] = _pair(stride, "stride")
    o.padding[:] = _pair(padding, "padding")
    o.dilation[:] = _pair(dilation, "dilation")
    o.groups = groups
    return call(_lib.tensor_conv2d, input._h, weight._h, None if bias is None else bias._h, byref(o))


def _pool_options(kernel_size, stride, padding, dilation=1, count_include_pad=True):
    o = _lib.Pool2dOptions()
    o.struct_size = sizeof(o)
    _lib.check(_lib.pool2d_options_init(byref(o)))
    k = _pair(kernel_size, "kernel_size")
    o.kernel_size[:] = k
    o.stride[:] = k if stride is None else _pair(stride, "stride")
    o.padding[:] = _pair(padding, "padding")
    o.dilation[:] = _pair(dilation, "dilation")
    o.count_include_pad = 1 if count_include_pad else 0
    return o


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1):  # noqa: A002
    o = _pool_options(kernel_size, stride, padding, dilation)
    return call(_lib.tensor_max_pool2d, input._h, byref(o))


def avg_pool2d(input, kernel_size, stride=None, padding=0, count_include_pad=True):  # noqa: A002
    o = _pool_options(kernel_size, stride, padding, 1, count_include_pad)
    return call(_lib.tensor_avg_pool2d, input._h, byref(o))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalizes over the trailing dims `normalized_shape` (biased variance, as PyTorch), then weight and bias."""
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    shape = list(input.shape)
    if shape[len(shape) - len(ns):] != ns:
        raise errors.ShapeError("layer_norm: normalized_shape %s does not match the trailing dims of input %s"
                         % (ns, shape))
    x = input.reshape(shape[:len(shape) - len(ns)] + [-1]) if len(ns) != 1 else input
    mu = x.mean(-1, keepdim=True)
    d = x - mu
    var = (d * d).mean(-1, keepdim=True)
    y = d * (var + eps).pow(-0.5)
    if len(ns) != 1:
        y = y.reshape(shape)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def embedding(input, weight):  # noqa: A002
    """Rows of weight [num_embeddings, dim] picked by the int64 indices `input` (any shape): input.shape + [dim]."""
    flat = input.reshape(-1)  # kept in a variable: a temporary would free its handle before the call
    rows = call(_lib.tensor_index_select, weight._h, 0, flat._h)
    return rows.reshape(list(input.shape) + [weight.shape[-1]])


def dropout(input, p=0.5, training=True):  # noqa: A002
    """Zeroes elements with probability p and scales the rest by 1 / (1 - p) when training (p == 1: zeros).

    One op (ember_tensor_dropout) on the input's device: the mask comes from libember's generator (manual_seed seeds
    it), and inside ember.compile the draw is recorded and made again on every replay."""
    if not 0 <= p <= 1:
        raise ValueError("dropout probability has to be between 0 and 1, but got %r" % (p,))
    if not training or p == 0:
        return input
    return call(_lib.tensor_dropout, input._h, float(p))


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Average pooling to `output_size` (an int or a pair; None keeps that input size), any input size, with
    torch's windows [floor(i * H / oh), ceil((i + 1) * H / oh))."""
    h, w = input.shape[-2:]
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    oh, ow = (h if s is None else s for s in output_size)
    oh, ow = _pair((oh, ow), "output_size")
    if input.ndim == 3:  # [C, H, W], as torch accepts
        return adaptive_avg_pool2d(input.unsqueeze(0), (oh, ow)).squeeze(0)
    return call(_lib.tensor_adaptive_avg_pool2d, input._h, oh, ow)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,  # noqa: A002
               momentum=0.1, eps=1e-5):
    """Normalizes over every dim but 1 (channels). training: with the batch's statistics (biased variance), and
    the running statistics move toward them (unbiased variance) in place, as torch; else with the running ones."""
    shape = [1, -1] + [1] * (input.ndim - 2)
    dims = tuple(d for d in range(input.ndim) if d != 1)
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input size %s"
                             % (list(input.shape),))
        mean = input.mean(dims, keepdim=True)
        d = input - mean
        var = (d * d).mean(dims, keepdim=True)
        if running_mean is not None and running_var is not None:
            with autograd.no_grad():
                m = momentum
                assign_(running_mean, running_mean * (1.0 - m) + mean.reshape(-1) * m)
                assign_(running_var, running_var * (1.0 - m) + var.reshape(-1) * (m * n / (n - 1)))
        y = d * (var + eps).pow(-0.5)
    else:
        y = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).pow(-0.5)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def binary_cross_entropy(input, target, reduction="mean"):  # noqa: A002
    """-(target * log(input) + (1 - target) * log(1 - input)), each log clamped at -100 as torch does."""
    target = as_tensor_like(target, input)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError("Using a target size (%s) that is different to the input size (%s) is deprecated. "
                         "Please ensure they have the same size." % (list(target.shape), list(input.shape)))
    loss = -(target * input.log().clamp(min=-100.0) + (1.0 - target) * (1.0 - input).log().clamp(min=-100.0))
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, reduction="mean", pos_weight=None):  # noqa: A002
    """BCE of sigmoid(input), computed stably: max(x, 0) - x * t + log(1 + exp(-|x|)) (pos_weight: torch's)."""
    target = as_tensor_like(target, input)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError("Target size (%s) must be the same as input size (%s)"
                         % (list(target.shape), list(input.shape)))
    softplus_neg = (-input.abs()).exp().log1p() + (-input).clamp(min=0.0)  # log(1 + exp(-x))
    if pos_weight is None:
        loss = (1.0 - target) * input + softplus_neg
    else:
        log_weight = (pos_weight - 1.0) * target + 1.0
        loss = (1.0 - target) * input + log_weight * softplus_neg
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):  # noqa: A002
    """0.5 d^2 where |d| <= delta, else delta * (|d| - 0.5 delta), d = input - target (torch.nn.functional)."""
    target = as_tensor_like(target, input)
    if reduction == "none":
        d = input - target
        ad = d.abs()
        return where(ad <= delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    if reduction not in _REDUCTIONS:
        raise ValueError("reduction must be 'mean', 'sum' or 'none', got %r" % (reduction,))
    return call(_lib.loss_huber, input._h, target._h, _REDUCTIONS[reduction], float(delta))


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):  # noqa: A002
    """0.5 * d^2 / beta where |d| < beta, else |d| - 0.5 * beta (d = input - target); beta 0 is l1_loss."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


# issue 13 (h-norms): conv_transpose2d, group_norm, rms_norm
from .functional_norms import conv_transpose2d, group_norm, rms_norm  # noqa: E402,F401
from .functional_shape import interpolate, pad  # noqa: E402,F401  (issue 13)
