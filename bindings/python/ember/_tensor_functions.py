"""Functions over several tensors: ember.where, ember.cat, ember.stack (also nn.functional.where)."""
from ctypes import c_void_p

from . import _lib
from .tensor import Tensor, as_tensor_like, call


def where(condition, input, other):  # noqa: A002
    """condition ? input : other, elementwise with broadcasting (numbers take the other operand's kind)."""
    if not isinstance(input, Tensor):
        input = as_tensor_like(input, other)
    other = as_tensor_like(other, input)
    return call(_lib.tensor_where, condition._h, input._h, other._h)


def cat(tensors, dim=0):
    hs = [t._h for t in tensors]
    arr = (c_void_p * len(hs))(*hs)
    return call(_lib.tensor_cat, arr, len(hs), dim)


def stack(tensors, dim=0):
    return cat([t.unsqueeze(dim) for t in tensors], dim)
