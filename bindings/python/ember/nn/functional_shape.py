"""ember.nn.functional's pad and interpolate (issue 13), torch 1.13's signatures over one C call each."""
import math

from .. import _lib

_MODES = {"nearest": 0, "bilinear": 1}


def pad(input, pad, mode="constant", value=None):  # noqa: A002 (torch's argument names)
    """torch.nn.functional.pad: `pad` holds (left, right) pairs from the last dim; modes constant (any rank,
    negative pads crop), reflect and replicate (the last 1 to 3 dims)."""
    return input._pad(pad, mode, value)


def _two(v, name, kind):
    if isinstance(v, (list, tuple)):
        if len(v) != 2:
            raise ValueError("interpolate: %s must have 2 values for a 4-D input, got %r" % (name, v))
        return [kind(x) for x in v]
    return [kind(v), kind(v)]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """torch.nn.functional.interpolate on a 4-D (N, C, H, W) input, modes nearest and bilinear."""
    if mode not in _MODES:
        raise NotImplementedError("interpolate: mode %r is not supported (nearest, bilinear)" % (mode,))
    if antialias:
        raise NotImplementedError("interpolate: antialias is not supported")
    if align_corners is not None and mode == "nearest":
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if input.ndim != 4:
        raise NotImplementedError("interpolate: input must be 4-D (N, C, H, W), got %d-D" % input.ndim)
    sizes = (_lib.c_int64 * 2)()
    scales = (_lib.c_double * 2)()
    n_size = n_scale = 0
    if size is not None:
        sizes[:] = _two(size, "size", int)
        n_size = 2
    elif recompute_scale_factor:  # torch: the output size from the factor, then the factor forgotten
        f = _two(scale_factor, "scale_factor", float)
        sizes[:] = [int(math.floor(float(input.shape[2 + i]) * f[i])) for i in range(2)]
        n_size = 2
    else:
        scales[:] = _two(scale_factor, "scale_factor", float)
        n_scale = 2
    return input._call(_lib.interpolate, input._h, sizes, n_size, scales, n_scale, _MODES[mode],
                       1 if align_corners else 0)
