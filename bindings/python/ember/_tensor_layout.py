"""LayoutMixin: ember.Tensor's shape changes, transposes and gathers (indexing is _tensor_index)."""
from . import _lib


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def wrap_dim(dim, rank):
    """`dim` in [0, rank) (negatives count from the end); IndexError like torch's when it is out of range (a rank-0
    tensor accepts -1 and 0)."""
    top = max(rank, 1)
    if not -top <= dim < top:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-top, top - 1, dim))
    return dim % top


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
        rank = self.ndim
        return self._call(_lib.tensor_transpose, self._h, wrap_dim(dim0, rank), wrap_dim(dim1, rank))

    def t(self):
        """The transpose of a rank-2 tensor (a rank-1 tensor is returned as is), as torch.Tensor.t."""
        return self if self.ndim < 2 else self._call(_lib.tensor_transpose, self._h, 0, 1)

    T = property(t)

    def flatten(self, start_dim=0, end_dim=-1):
        s = list(self.shape)
        if not s:
            return self.reshape([1])
        a, e = wrap_dim(start_dim, len(s)), wrap_dim(end_dim, len(s))
        if a > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        n = 1
        for d in s[a:e + 1]:
            n *= d
        return self.reshape(s[:a] + [n] + s[e + 1:])

    def unsqueeze(self, dim):
        """A dim of size 1 inserted at `dim` (in [-rank-1, rank]; IndexError otherwise, as torch)."""
        s = list(self.shape)
        s.insert(wrap_dim(dim, len(s) + 1), 1)
        return self.reshape(s)

    def squeeze(self, dim=None):
        s = list(self.shape)
        if dim is None:
            keep = [d for d in s if d != 1]
        else:
            keep = s[:]
            if s and s[wrap_dim(dim, len(s))] == 1:
                del keep[dim]
        return self.reshape(keep)

    def index_select(self, dim, index):
        return self._call(_lib.tensor_index_select, self._h, wrap_dim(dim, self.ndim), index._h)

    def gather(self, dim, index):
        return self._call(_lib.tensor_gather, self._h, wrap_dim(dim, self.ndim), index._h)
