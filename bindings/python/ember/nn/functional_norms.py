"""ember.nn.functional's conv_transpose2d, group_norm and rms_norm (issue 13), exported by functional.py.

conv_transpose2d is libember's ember_tensor_conv_transpose2d (weight [in, out / groups, kH, kW], torch's layout);
group_norm and rms_norm are composed from tensor ops, as layer_norm is, so autograd follows them.
"""
from ctypes import byref, sizeof

from .. import _lib, errors
from ..tensor import call

# torch.finfo(dtype).eps: RMSNorm's eps=None (PyTorch 2.4).
_FINFO_EPS = {"float32": 1.1920928955078125e-07, "float64": 2.220446049250313e-16}


def _pair(v, name):
    """An int or a pair of ints as a pair (functional.py's rule; not imported from it: functional imports this)."""
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) != 2 or not all(isinstance(i, int) for i in v):
        raise ValueError("%s must be an int or a pair of ints, got %r" % (name, v))
    return v


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    """Transposed 2-D convolution (torch.nn.functional.conv_transpose2d): input [N, C_in, H, W], weight [C_in,
    C_out / groups, kH, kW], bias [C_out] or None. Output size (H - 1) * stride - 2 * padding + dilation * (kH - 1) +
    output_padding + 1; output_padding must be smaller than stride or dilation."""
    o = _lib.ConvTranspose2dOptions()
    o.struct_size = sizeof(o)
    _lib.check(_lib.conv_transpose2d_options_init(byref(o)))
    o.stride[:] = _pair(stride, "stride")
    o.padding[:] = _pair(padding, "padding")
    o.output_padding[:] = _pair(output_padding, "output_padding")
    o.dilation[:] = _pair(dilation, "dilation")
    o.groups = groups
    return call(_lib.tensor_conv_transpose2d, input._h, weight._h, None if bias is None else bias._h, byref(o))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """torch.nn.functional.group_norm: input [N, C, *] normalized per sample over each group of C / num_groups
    channels (biased variance), then weight[c] and bias[c]."""
    shape = list(input.shape)
    if len(shape) < 2:
        raise errors.ShapeError("group_norm: expected an input [N, C, *], got %s" % (shape,))
    if num_groups <= 0 or shape[1] % num_groups:
        raise ValueError("group_norm: the number of channels %d must be divisible by num_groups %d"
                         % (shape[1], num_groups))
    x = input.reshape(shape[0], num_groups, -1)
    d = x - x.mean(-1, keepdim=True)
    var = (d * d).mean(-1, keepdim=True)
    y = (d * (var + eps).pow(-0.5)).reshape(shape)
    per_channel = [1, shape[1]] + [1] * (len(shape) - 2)
    if weight is not None:
        y = y * weight.reshape(per_channel)
    if bias is not None:
        y = y + bias.reshape(per_channel)
    return y


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """PyTorch 2.4's torch.nn.functional.rms_norm: x / sqrt(mean(x^2) + eps) over the trailing dims
    `normalized_shape`, times weight; eps None is the machine epsilon of the input's dtype."""
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    shape = list(input.shape)
    if not ns or shape[len(shape) - len(ns):] != ns:
        raise errors.ShapeError("rms_norm: normalized_shape %s does not match the trailing dims of input %s"
                                % (ns, shape))
    if eps is None:
        eps = _FINFO_EPS.get(input.dtype, _FINFO_EPS["float32"])
    x = input.reshape(shape[:len(shape) - len(ns)] + [-1]) if len(ns) != 1 else input
    y = x * ((x * x).mean(-1, keepdim=True) + eps).pow(-0.5)
    if len(ns) != 1:
        y = y.reshape(shape)
    if weight is not None:
        y = y * weight
    return y
