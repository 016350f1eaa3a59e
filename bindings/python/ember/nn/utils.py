"""nn.utils: gradient clipping (torch.nn.utils.clip_grad_norm_, clip_grad_value_) over the params' .grad."""
import math

from .. import autograd, creation
from .._tensor_functions import stack
from ..tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def _norm(t, norm_type):
    if norm_type == 2.0:
        return (t * t).sum().sqrt()
    if norm_type == 1.0:
        return t.abs().sum()
    return (t.abs() ** norm_type).sum() ** (1.0 / norm_type)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales every .grad by max_norm / (total_norm + 1e-6) when that is below 1, where total_norm is the
    norm_type-norm of all the gradients together; returns total_norm (a tensor)."""
    params = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not params:
        return creation.tensor(0.0)
    with autograd.no_grad():
        grads = [p.grad.detach().reshape(-1) for p in params]
        if norm_type == math.inf:
            norms = [g.abs().max() for g in grads]
            total_norm = norms[0] if len(norms) == 1 else stack(norms).max()
        else:
            total_norm = _norm(stack([_norm(g, norm_type) for g in grads]), norm_type)
        value = total_norm.item()
        if error_if_nonfinite and (math.isnan(value) or math.isinf(value)):
            raise RuntimeError("The total norm of order {} for gradients from `parameters` is non-finite, so it "
                               "cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`".format(norm_type))
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        for p in params:
            p.grad = p.grad * clip_coef_clamped
    return total_norm


def clip_grad_value_(parameters, clip_value):
    """Clamps every .grad into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for p in _grads(parameters):
        p.grad = p.grad.clamp(min=-clip_value, max=clip_value)
