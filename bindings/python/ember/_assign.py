"""Replacing a tensor's value while the Python object (and so every reference to it) stays the same: what
nn.init, optimizers, load_state_dict and BatchNorm's running statistics need.

libember's tensors are values. When libember has in-place updates (ember_tensor_inplace, issue 11's A1), the
value is copied into the tensor's own handle, so the leaf keeps its identity inside libember too. Until then the
Python object takes over a new handle holding the value (a fresh leaf with the same requires_grad); the old handle
is freed. Either way ``t`` is the same object afterwards, like ``t.data.copy_(value)`` in PyTorch.
"""
from . import _lib, autograd

# None with a libember older than issue 11's in-place updates (the binding may declare it as optional)
_INPLACE = getattr(_lib, "tensor_inplace", None)
INPLACE_COPY = _lib.INPLACE_COPY


def assign_(t, value):
    """Gives the tensor `t` the values (and dtype) of the tensor `value` in place, outside autograd; returns t.

    `value` must have t's shape. Nothing is recorded for backward."""
    if tuple(value.shape) != tuple(t.shape):
        raise RuntimeError("The size of tensor a (%s) must match the size of tensor b (%s)"
                           % (list(t.shape), list(value.shape)))
    same_dtype = value.dtype == t.dtype
    if _INPLACE is not None and same_dtype:
        with autograd.no_grad():
            _lib.check(_INPLACE(t._h, value._h, INPLACE_COPY))
        return t
    return rebind_(t, value)


def rebind_(t, value):
    """Makes the Python tensor `t` hold a new handle with `value`'s values (any shape or dtype), keeping t's
    requires_grad; the old handle is freed. Used when the shape changes (a lazy parameter materialized), the
    dtype changes (Module.double()), or libember has no in-place copy."""
    requires_grad = t.requires_grad
    fresh = value.detach().clone()  # our own handle: `value` may be used elsewhere
    t._h, fresh._h = fresh._h, t._h  # `fresh` now owns (and will free) t's old handle
    if requires_grad:
        _lib.check(_lib.tensor_set_requires_grad(t._h, 1))
    return t
