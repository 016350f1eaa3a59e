"""ReductionMixin: ember.Tensor's sum, mean, prod, max, min, argmax and argmin.

A reduction over everything, or over the one dim of a rank-1 tensor, is rank 0 (shape (1,) with a libember
without rank 0).
"""
from collections import namedtuple

from . import _lib
from ._op_codes import R_MAX, R_MEAN, R_MIN, R_PROD, R_SUM
from ._tensor_base import TensorBase

_reduce, _reduce_all = _lib.tensor_reduce, _lib.tensor_reduce_all

ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])


def _dims(dim, rank):
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = []
    for d in dims:
        if not -rank <= d < rank:
            # let libember produce its own message for an out-of-range dim
            return dims
        out.append(d % rank)
    return out


def _reduction(op, doc):
    def method(self, dim=None, keepdim=False):
        if dim is None:
            t = self._call(_reduce_all, self._h, op)
            if keepdim and list(t.shape) != [1] * self.ndim:
                t = t.reshape([1] * self.ndim)
            return t
        t = self
        rank = self.ndim
        for d in sorted(_dims(dim, rank), reverse=True):
            if not keepdim and t.ndim == 1:  # a rank-1 input keeps shape [1]
                return t._call(_reduce, t._h, op, d, 0)
            t = t._call(_reduce, t._h, op, d, 1 if keepdim else 0)
        return t
    method.__doc__ = doc
    return method


def _extremum(op, arg_fn, pairwise):
    def method(self, dim=None, keepdim=False):
        """None: the extremum over everything (rank 0); a Tensor: elementwise; an int: (values, indices)."""
        if dim is None:
            return self._call(_reduce_all, self._h, op)
        if isinstance(dim, TensorBase):
            return pairwise(self, dim)
        k = 1 if keepdim else 0
        return ValuesIndices(self._call(_reduce, self._h, op, dim, k), self._call(arg_fn, self._h, dim, k))
    return method


def _arg(fn):
    def method(self, dim=None, keepdim=False):
        if dim is None:
            flat = self.reshape(-1)
            return flat._call(fn, flat._h, 0, 0)
        return self._call(fn, self._h, dim, 1 if keepdim else 0)
    return method


class ReductionMixin:
    """Reductions over dims of ember.Tensor."""

    __slots__ = ()

    sum = _reduction(R_SUM, "Sum over `dim` (an int or a tuple; None: every element, rank 0); keepdim keeps it as "
                            "1.")
    mean = _reduction(R_MEAN, "Mean over `dim` (an int or a tuple; None: every element, rank 0).")
    prod = _reduction(R_PROD, "Product over `dim` (an int or a tuple; None: every element, rank 0).")
    max = _extremum(R_MAX, _lib.tensor_argmax, lambda self, other: self.maximum(other))
    min = _extremum(R_MIN, _lib.tensor_argmin, lambda self, other: self.minimum(other))
    argmax = _arg(_lib.tensor_argmax)
    argmin = _arg(_lib.tensor_argmin)
