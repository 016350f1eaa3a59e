"""EngineOpsMixin: the typed engine's ops that ember.h gained for issue 11 (expand, flip, repeat, scatter_add,
masked_fill, var; std is ShapeOpsMixin's), with torch.Tensor's names and arguments. Each is one C call (differentiable)."""
from . import _lib
from ._tensor_layout import _shape_args, wrap_dim


def _ints(values):
    values = list(values)
    return (_lib.c_int64 * len(values))(*values), len(values)


class EngineOpsMixin:
    __slots__ = ()

    def expand(self, *sizes):
        """A view of this tensor broadcast to `sizes` (-1 keeps a size; new dims lead), as torch.Tensor.expand."""
        dims, n = _ints(_shape_args(sizes))
        return self._call(_lib.tensor_expand, self._h, dims, n)

    def expand_as(self, other):
        return self.expand(list(other.shape))

    def flip(self, *dims):
        """The order along each of `dims` reversed (flip(0, 1) or flip((0, 1))), as torch.flip."""
        ds, n = _ints(_shape_args(dims))
        return self._call(_lib.tensor_flip, self._h, ds, n)

    def repeat(self, *sizes):
        """This tensor tiled sizes[i] times along dim i (more sizes than dims add leading dims), as torch."""
        ts, n = _ints(_shape_args(sizes))
        return self._call(_lib.tensor_repeat, self._h, ts, n)

    def scatter_add(self, dim, index, src):
        """A copy with src's values added at `index` along `dim` (index and src of one shape)."""
        return self._call(_lib.tensor_scatter_add, self._h, dim, index._h, src._h)

    def masked_fill(self, mask, value):
        """value where the bool `mask` (broadcast to this shape) is true; value: a number or a one-element tensor."""
        if hasattr(value, "item"):
            value = value.item()
        return self._call(_lib.tensor_masked_fill, self._h, mask._h, float(value))

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        """Variance over `dim` (an int, a tuple, or None for every element) with Bessel's correction (unbiased, or
        `correction` as in torch 1.13's keyword form)."""
        c = (1 if unbiased else 0) if correction is None else int(correction)
        rank = self.ndim
        if dim is None:
            flat = self.reshape(-1)
            y = flat._call(_lib.tensor_var, flat._h, 0, c, 0)
            return y.reshape([1] * rank) if keepdim else y
        if isinstance(dim, (tuple, list)):
            ds = sorted({wrap_dim(d, rank) for d in dim})
            if len(ds) == 1:
                return self.var(ds[0], correction=c, keepdim=keepdim)
            # The dims moved to the end and flattened into one: the variance over their elements together.
            rest = [d for d in range(rank) if d not in ds]
            shape = list(self.shape)
            moved = self.permute(rest + ds).reshape([shape[d] for d in rest] + [-1])
            y = moved._call(_lib.tensor_var, moved._h, -1, c, 0)
            if keepdim:
                y = y.reshape([1 if d in ds else shape[d] for d in range(rank)])
            return y
        return self._call(_lib.tensor_var, self._h, dim, c, 1 if keepdim else 0)
