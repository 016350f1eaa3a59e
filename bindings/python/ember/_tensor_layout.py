"""LayoutMixin: ember.Tensor's shape changes, transposes, gathers and indexing (``t[...]``)."""
from ctypes import c_int64

from . import _lib
from ._convert import I64
from ._tensor_base import TensorBase


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def _norm_index(i, size):
    if i < -size or i >= size:
        raise IndexError("index %d is out of bounds for dimension with size %d" % (i, size))
    return i % size


class LayoutMixin:
    """Views and rearrangements of ember.Tensor (each returns a new tensor)."""

    __slots__ = ()

    def reshape(self, *shape):
        """reshape(2, -1) or reshape((2, -1)): one -1 is inferred."""
        dims, n = _lib.shape_array(_shape_args(shape))
        return self._call(_lib.tensor_reshape, self._h, dims, n)

    view = reshape

    def permute(self, *dims):
        axes, n = _lib.shape_array(_shape_args(dims))
        return self._call(_lib.tensor_permute, self._h, axes, n)

    def transpose(self, dim0, dim1):
        return self._call(_lib.tensor_transpose, self._h, dim0, dim1)

    def t(self):
        """The transpose of a rank-2 tensor (a rank-1 tensor is returned as is), as torch.Tensor.t."""
        return self if self.ndim < 2 else self._call(_lib.tensor_transpose, self._h, 0, 1)

    T = property(t)

    def flatten(self, start_dim=0, end_dim=-1):
        s = list(self.shape)
        a, e = start_dim % len(s), end_dim % len(s)
        n = 1
        for d in s[a:e + 1]:
            n *= d
        return self.reshape(s[:a] + [n] + s[e + 1:])

    def unsqueeze(self, dim):
        s = list(self.shape)
        s.insert(dim % (len(s) + 1), 1)
        return self.reshape(s)

    def squeeze(self, dim=None):
        s = list(self.shape)
        if dim is None:
            keep = [d for d in s if d != 1] or [1]
        else:
            keep = s[:]
            if s[dim] == 1 and len(s) > 1:
                del keep[dim]
        return self.reshape(keep)

    def index_select(self, dim, index):
        return self._call(_lib.tensor_index_select, self._h, dim, index._h)

    def gather(self, dim, index):
        return self._call(_lib.tensor_gather, self._h, dim, index._h)

    def __getitem__(self, key):
        """Integers, step-1 slices and Ellipsis per dim; an int Tensor or list of ints selects along dim 0."""
        if isinstance(key, TensorBase):
            if key.dtype == "bool":
                raise NotImplementedError("ember: boolean mask indexing is not supported (use ember.where)")
            flat = key.reshape(-1)
            return self._call(_lib.tensor_index_select, self._h, 0, flat._h)
        if isinstance(key, list):
            return self[self._from_data(key, I64)]
        if not isinstance(key, tuple):
            key = (key,)
        shape = self.shape
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
        if len(key) > len(shape):
            raise IndexError("too many indices for tensor of dimension %d" % len(shape))
        starts, ends, out_shape = [], [], []
        for d, k in enumerate(key):
            if isinstance(k, slice):
                if k.step not in (None, 1):
                    raise NotImplementedError("ember: slices with a step other than 1")
                a, b, _ = k.indices(shape[d])
                starts.append(a)
                ends.append(max(a, b))
                out_shape.append(max(0, b - a))
            elif isinstance(k, int):
                i = _norm_index(k, shape[d])
                starts.append(i)
                ends.append(i + 1)
            else:
                raise TypeError("ember: unsupported index %r" % (k,))
        n = len(key)
        t = self._call(_lib.tensor_slice, self._h, (c_int64 * n)(*starts), (c_int64 * n)(*ends), n)
        out_shape += list(shape[n:])
        if len(out_shape) != len(shape):
            t = t.reshape(out_shape or [1])
        return t
